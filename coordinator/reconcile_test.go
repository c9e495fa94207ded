package coordinator

import (
	"math"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/linerate/linerate/pktgen"
	recv "github.com/linerate/linerate/receiver"
)

func TestMaxPPS(t *testing.T) {
	for _, tt := range []struct {
		speed, frame, want float64
	}{
		{10_000, 60, 14_880_952.38}, {100_000, 60, 148_809_523.8}, {10_000, 1514, 812_743.8}, {1_000, 60, 1_488_095.2}, {0, 60, 0},
	} {
		if got := pktgen.LinePPS(tt.speed, tt.frame); math.Abs(got-tt.want) > 1 {
			t.Errorf("pktgen.LinePPS(%v Mb/s, %v B) = %.1f, want %.1f", tt.speed, tt.frame, got, tt.want)
		}
	}
}

func TestReconcile(t *testing.T) {
	base := FlowInput{Sender: "s1", Receiver: "r1", DurationSec: 2, FrameBytes: 60, LinkSpeedMbps: 10_000}
	tests := []struct {
		name string
		mod  func(*FlowInput)
		want Flow
		lost []uint64 // per stream
	}{{
		name: "clean",
		mod: func(in *FlowInput) {
			in.Streams = []Stream{{Sent: 1000, StreamReport: recv.StreamReport{Received: 1000}}, {Sent: 500, StreamReport: recv.StreamReport{Received: 500}}}
		},
		want: Flow{Streams: 2, Sent: 1500, Received: 1500},
		lost: []uint64{0, 0},
	}, {
		name: "network loss, head and tail included",
		mod: func(in *FlowInput) {
			in.Streams = []Stream{{Sent: 1000, StreamReport: recv.StreamReport{Received: 990}}, {Sent: 1000, StreamReport: recv.StreamReport{Received: 1000}}}
		},
		want: Flow{Streams: 2, Sent: 2000, Received: 1990, Lost: 10, LossRatio: 0.005, LostNetwork: 10},
		lost: []uint64{10, 0},
	}, {
		name: "duplicates do not hide loss",
		mod: func(in *FlowInput) {
			in.Streams = []Stream{{Sent: 100, StreamReport: recv.StreamReport{Received: 100, Duplicates: 4}}}
		},
		want: Flow{Streams: 1, Sent: 100, Received: 100, Duplicates: 4, Lost: 4, LossRatio: 0.04, LostNetwork: 4},
		lost: []uint64{4},
	}, {
		// Kernel pktgen cut a burst of 4 short after 1 copy: the next
		// frame's 4 copies fell in the same step of the receiver's count,
		// 1 + 4 copies where 4 were expected, all of them sent.
		name: "burst: a cut-short burst's copies are received, not duplicates",
		mod: func(in *FlowInput) {
			in.Burst = 4
			in.Streams = []Stream{{Sent: 1001, StreamReport: recv.StreamReport{Received: 1001, Duplicates: 1}}}
		},
		want: Flow{Streams: 1, Sent: 1001, Received: 1001, Duplicates: 1},
		lost: []uint64{0},
	}, {
		name: "burst: loss is still sent − received",
		mod: func(in *FlowInput) {
			in.Burst = 4
			in.Streams = []Stream{{Sent: 1000, StreamReport: recv.StreamReport{Received: 996, Duplicates: 2, Late: 1}}}
		},
		want: Flow{Streams: 1, Sent: 1000, Received: 996, Duplicates: 2, Lost: 5, LossRatio: 0.005, LostNetwork: 5},
		lost: []uint64{5},
	}, {
		name: "one stream's surplus does not pay for another's loss",
		mod: func(in *FlowInput) {
			in.Streams = []Stream{{Sent: 100, StreamReport: recv.StreamReport{Received: 90}}, {Sent: 100, StreamReport: recv.StreamReport{Received: 100, Reordered: 3}}}
		},
		want: Flow{Streams: 2, Sent: 200, Received: 190, Reordered: 3, Lost: 10, LossRatio: 0.05, LostNetwork: 10},
		lost: []uint64{10, 0},
	}, {
		name: "attribution: sender host, then receiver host, rest network",
		mod: func(in *FlowInput) {
			in.Streams = []Stream{{Sent: 1000, StreamReport: recv.StreamReport{Received: 900}}}
			in.Refused, in.SenderHostDrops, in.ReceiverHostDrops = 7, 30, 50
		},
		want: Flow{Streams: 1, Sent: 1000, Received: 900, Lost: 100, LossRatio: 0.1, Refused: 7, LostSenderHost: 30, LostReceiverHost: 50, LostNetwork: 20},
		lost: []uint64{100},
	}, {
		name: "host counters larger than the loss are capped",
		mod: func(in *FlowInput) {
			in.Streams = []Stream{{Sent: 1000, StreamReport: recv.StreamReport{Received: 990}}}
			in.ReceiverHostDrops = 500
		},
		want: Flow{Streams: 1, Sent: 1000, Received: 990, Lost: 10, LossRatio: 0.01, LostReceiverHost: 10},
		lost: []uint64{10},
	}, {
		name: "generator-limited, not lossy",
		mod: func(in *FlowInput) {
			in.Streams = []Stream{{Sent: 1000, StreamReport: recv.StreamReport{Received: 1000}}}
			in.OfferedPPS, in.AchievedPPS = 1_000_000, 500
		},
		want: Flow{Streams: 1, Sent: 1000, Received: 1000, GeneratorLimited: true, OfferedPPS: 1_000_000, AchievedPPS: 500},
		lost: []uint64{0},
	}, {
		name: "within 1 % of the offered rate is reached",
		mod: func(in *FlowInput) {
			in.Streams = []Stream{{Sent: 1000, StreamReport: recv.StreamReport{Received: 1000}}}
			in.OfferedPPS, in.AchievedPPS = 1000, 991
		},
		want: Flow{Streams: 1, Sent: 1000, Received: 1000, OfferedPPS: 1000, AchievedPPS: 991},
		lost: []uint64{0},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := base
			tt.mod(&in)
			got := Reconcile(in)
			tt.want.Sender, tt.want.Receiver, tt.want.DurationSec = "s1", "r1", 2
			for i, st := range in.Streams {
				st.Lost = tt.lost[i]
				tt.want.StreamDetail = append(tt.want.StreamDetail, st)
			}
			distinct := float64(tt.want.Received - tt.want.Duplicates)
			if in.Burst > 1 {
				distinct = float64(tt.want.Received)
			}
			tt.want.PPS = distinct / 2
			tt.want.L2BPS = tt.want.PPS * 64 * 8
			tt.want.L1BPS = tt.want.PPS * 84 * 8
			tt.want.LineRatePct = 100 * tt.want.L1BPS / 10e9
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if got.Lost != got.LostSenderHost+got.LostReceiverHost+got.LostNetwork {
				t.Errorf("attribution does not add up: %+v", got)
			}
		})
	}
}

// At line rate the report says 100 %.
func TestLineRatePct(t *testing.T) {
	pps := pktgen.LinePPS(10_000, 60)
	f := Reconcile(FlowInput{Streams: []Stream{{Sent: uint64(pps), StreamReport: recv.StreamReport{Received: uint64(pps)}}}, DurationSec: 1, FrameBytes: 60, LinkSpeedMbps: 10_000})
	if math.Abs(f.LineRatePct-100) > 0.001 {
		t.Errorf("line rate %% = %v at %v pps of 64-byte frames on 10G", f.LineRatePct, pps)
	}
}
