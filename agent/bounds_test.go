package agent

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/linerate/linerate/latency"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
	"github.com/linerate/linerate/receiver"
	"github.com/linerate/linerate/topology/cpuset"
)

// TestRequestBounds: every request type's bounded fields at their edges,
// the largest value accepted and one beyond it, on a host of CPUs 0-7;
// each refusal is ErrInvalid naming the field and the bad value.
func TestRequestBounds(t *testing.T) {
	host := cpuset.Of(0, 1, 2, 3, 4, 5, 6, 7)
	b := requestBounds{cpus: func() cpuset.Set { return host }, maxRun: 24 * time.Hour}
	unknown := requestBounds{cpus: func() cpuset.Set { return cpuset.Set{} }, maxRun: 24 * time.Hour}
	d := durationpb.New
	n := func(k int) []int32 { return make([]int32, k) }
	cfg := func(c *lineratev1.SenderConfig) *lineratev1.ConfigureRequest {
		return &lineratev1.ConfigureRequest{LeaseId: "l", Config: c}
	}
	for _, c := range []struct {
		name string
		b    requestBounds
		req  any
		want string // "" = accepted; else in the refusal
	}{
		// Tune: threads up to the host's CPUs, exclude_cpus on the host.
		{"tune threads 8", b, &lineratev1.TuneRequest{Threads: 8}, ""},
		{"tune threads 9", b, &lineratev1.TuneRequest{Threads: 9}, "threads 9: want 0 (every queue) to 8"},
		{"tune threads -1", b, &lineratev1.TuneRequest{Threads: -1}, "threads -1"},
		{"tune exclude 7", b, &lineratev1.TuneRequest{ExcludeCpus: []int32{0, 7}}, ""},
		{"tune exclude 8", b, &lineratev1.TuneRequest{ExcludeCpus: []int32{0, 8}}, "exclude_cpus[1] 8: not a CPU of this host, valid CPUs are 0-7"},
		{"tune exclude 70000", b, &lineratev1.TuneRequest{ExcludeCpus: []int32{70000}}, "exclude_cpus[0] 70000: not a CPU of this host, valid CPUs are 0-7"},
		{"tune exclude -1", b, &lineratev1.TuneRequest{ExcludeCpus: []int32{-1}}, "exclude_cpus[0] -1"},
		{"tune exclude 8191 unknown host", unknown, &lineratev1.TuneRequest{ExcludeCpus: []int32{8191}}, ""},
		{"tune exclude 8192 unknown host", unknown, &lineratev1.TuneRequest{ExcludeCpus: []int32{8192}}, "exclude_cpus[0] 8192: not a CPU, valid CPUs are 0-8191"},
		{"tune exclude list 8192", unknown, &lineratev1.TuneRequest{ExcludeCpus: n(8192)}, ""},
		{"tune exclude list 8193", unknown, &lineratev1.TuneRequest{ExcludeCpus: n(8193)}, "exclude_cpus: 8193 CPUs, at most 8192"},

		// Arm: the receiver's limits, by their proto names.
		//lint:ignore SA1019 the deprecated field is still accepted (and ignored): its largest value is part of the API's edge
		{"arm max", b, &lineratev1.ArmRequest{Repeats: receiver.MaxRepeats, MaxStreams: receiver.MaxStreamsLimit, MaxRanges: receiver.MaxRangesLimit, Window: receiver.MaxWindow, SeqCapacity: 1 << 32, Iface: "abcdefghijklmno"}, ""},
		{"arm repeats", b, &lineratev1.ArmRequest{Repeats: receiver.MaxRepeats + 1}, "repeats 32769"},
		{"arm max_streams", b, &lineratev1.ArmRequest{MaxStreams: receiver.MaxStreamsLimit + 1}, "max_streams 65537"},
		{"arm max_ranges", b, &lineratev1.ArmRequest{MaxRanges: receiver.MaxRangesLimit + 1}, "max_ranges 4097"},
		{"arm window big", b, &lineratev1.ArmRequest{Window: receiver.MaxWindow * 2}, "window 268435456"},
		{"arm window small", b, &lineratev1.ArmRequest{Window: receiver.MinWindow}, ""},
		{"arm window not a power", b, &lineratev1.ArmRequest{Window: receiver.MinWindow + 1}, "window 1025"},
		{"arm iface", b, &lineratev1.ArmRequest{Iface: "abcdefghijklmnop"}, `iface "abcdefghijklmnop"`},
		{"arm reflect_ports max", b, &lineratev1.ArmRequest{ReflectPorts: make([]uint32, receiver.MaxReflectPorts)}, ""},
		{"arm reflect_ports", b, &lineratev1.ArmRequest{ReflectPorts: make([]uint32, receiver.MaxReflectPorts+1)}, "reflect_ports: 1025 ports, at most 1024"},
		{"arm reflect_vlan max", b, &lineratev1.ArmRequest{ReflectVlan: 4094}, ""},
		{"arm reflect_vlan", b, &lineratev1.ArmRequest{ReflectVlan: 70000}, "reflect_vlan 70000: want a VLAN id, 1 to 4094 (0: untagged)"},
		{"configure rtt rate max", b, &lineratev1.ConfigureRequest{Config: &lineratev1.SenderConfig{Count: 1}, Rtt: &lineratev1.RttStream{Port: 1, RatePps: latency.MaxRTTRate}}, ""},
		{"configure rtt rate", b, &lineratev1.ConfigureRequest{Config: &lineratev1.SenderConfig{Count: 1}, Rtt: &lineratev1.RttStream{Port: 1, RatePps: latency.MaxRTTRate + 1}}, "rtt.rate_pps 10001: want 1 to 10000"},
		{"configure rtt rate 0", b, &lineratev1.ConfigureRequest{Config: &lineratev1.SenderConfig{Count: 1}, Rtt: &lineratev1.RttStream{Port: 1}}, "rtt.rate_pps 0: want 1 to 10000"},

		// Configure: CPUs, lists, rates, sizes, durations, run length.
		{"configure cpus 7", b, cfg(&lineratev1.SenderConfig{Cpus: []int32{7}, Count: 1}), ""},
		{"configure cpus 8", b, cfg(&lineratev1.SenderConfig{Cpus: []int32{8}}), "config.cpus[0] 8: not a CPU of this host, valid CPUs are 0-7"},
		{"configure cpus 70000", b, cfg(&lineratev1.SenderConfig{Cpus: []int32{70000}}), "config.cpus[0] 70000"},
		{"configure counts 8192", b, cfg(&lineratev1.SenderConfig{Counts: make([]uint64, 8192)}), ""},
		{"configure counts 8193", b, cfg(&lineratev1.SenderConfig{Counts: make([]uint64, 8193)}), "config.counts: 8193 entries, at most 8192"},
		{"configure rates 8193", b, cfg(&lineratev1.SenderConfig{RatesPps: make([]uint64, 8193)}), "config.rates_pps: 8193"},
		{"configure queues 8193", b, cfg(&lineratev1.SenderConfig{Queues: n(8193)}), "config.queues: 8193"},
		{"configure thread_dst 8193", b, cfg(&lineratev1.SenderConfig{ThreadDst: make([]*lineratev1.ThreadDest, 8193)}), "config.thread_dst: 8193"},
		{"configure rate 1e9", b, cfg(&lineratev1.SenderConfig{RatePps: 1e9}), ""},
		{"configure rate 1e9+1", b, cfg(&lineratev1.SenderConfig{RatePps: 1e9 + 1}), "config.rate_pps 1000000001: at most 1000000000"},
		{"configure rates_pps 1e9+1", b, cfg(&lineratev1.SenderConfig{RatesPps: []uint64{1, 1e9 + 1}}), "config.rates_pps[1] 1000000001"},
		{"configure delay 1000s", b, cfg(&lineratev1.SenderConfig{DelayNs: 1e12, Duration: d(time.Hour)}), ""},
		{"configure delay 1000s+1", b, cfg(&lineratev1.SenderConfig{DelayNs: 1e12 + 1}), "config.delay_ns 1000000000001"},
		{"configure flags 64", b, cfg(&lineratev1.SenderConfig{Flags: make([]string, 64)}), ""},
		{"configure flags 65", b, cfg(&lineratev1.SenderConfig{Flags: make([]string, 65)}), "config.flags: 65 flags, at most 64"},
		{"configure imix 21", b, cfg(&lineratev1.SenderConfig{Imix: make([]*lineratev1.ImixEntry, 21)}), "config.imix: 21 entries"},
		{"configure device", b, cfg(&lineratev1.SenderConfig{Device: "abcdefghijklmnop"}), `config.device "abcdefghijklmnop"`},
		{"configure duration 24h", b, cfg(&lineratev1.SenderConfig{Duration: d(24 * time.Hour)}), ""},
		{"configure duration 24h+1ns", b, cfg(&lineratev1.SenderConfig{Duration: d(24*time.Hour + 1)}), "config.duration 24h0m0.000000001s: longer than the agent's maximum run length 24h0m0s (--max-run)"},
		{"configure duration negative", b, cfg(&lineratev1.SenderConfig{Duration: d(-time.Second)}), "config.duration -1s: negative"},
		{"configure count 86400 at 1 pps", b, cfg(&lineratev1.SenderConfig{Count: 86400, RatePps: 1}), ""},
		{"configure count 86401 at 1 pps", b, cfg(&lineratev1.SenderConfig{Count: 86401, RatePps: 1}), "config.count 86401 at config.rate 1 pps (thread 0) would send for 24h0m1s"},
		{"configure count 1e10 at 1 pps", b, cfg(&lineratev1.SenderConfig{Count: 1e10, RatePps: 1}), "config.count 10000000000 at config.rate 1 pps (thread 0) would send for 317 years, longer than the agent's maximum run length 24h0m0s"},
		{"configure count 1e10 at 1 pps for 1h", b, cfg(&lineratev1.SenderConfig{Count: 1e10, RatePps: 1, Duration: d(time.Hour)}), ""},
		{"configure count 1e10 unpaced", b, cfg(&lineratev1.SenderConfig{Count: 1e10}), ""},
		{"configure per-thread counts", b, cfg(&lineratev1.SenderConfig{Counts: []uint64{10, 1e6}, RatesPps: []uint64{1, 10}}), "config.count 1000000 at config.rate 10 pps (thread 1) would send for 27h46m40s"},
		{"configure delay-paced", b, cfg(&lineratev1.SenderConfig{Count: 1e6, DelayNs: 1e9}), "config.count 1000000 at config.rate 1 pps"},
		{"configure delay-paced burst", b, cfg(&lineratev1.SenderConfig{Count: 1e6, DelayNs: 1e9, Burst: 100}), ""},

		// Watch and the lease TTLs.
		{"watch 1h", b, &lineratev1.WatchRequest{Interval: d(time.Hour)}, ""},
		{"watch 1h+1ns", b, &lineratev1.WatchRequest{Interval: d(time.Hour + 1)}, "interval 1h0m0.000000001s: at most 1h0m0s"},
		{"watch negative", b, &lineratev1.WatchRequest{Interval: d(-1)}, "interval -1ns: negative"},
		{"watch invalid", b, &lineratev1.WatchRequest{Interval: &durationpb.Duration{Seconds: 1, Nanos: -1}}, "interval: "},
		{"acquire ttl negative", b, &lineratev1.AcquireLeaseRequest{Ttl: d(-time.Second)}, "ttl -1s: negative"},
		{"renew ttl negative", b, &lineratev1.RenewLeaseRequest{Ttl: d(-time.Second)}, "ttl -1s: negative"},
		{"renew ttl", b, &lineratev1.RenewLeaseRequest{Ttl: d(time.Minute)}, ""},

		// Requests without bounded fields pass.
		{"describe", b, &lineratev1.DescribeRequest{}, ""},
		{"restore", b, &lineratev1.RestoreRequest{}, ""},
		{"collect", b, &lineratev1.CollectRequest{}, ""},
		{"start", b, &lineratev1.StartRequest{}, ""},
		{"stop", b, &lineratev1.StopRequest{}, ""},
		{"result", b, &lineratev1.ResultRequest{}, ""},
		{"release", b, &lineratev1.ReleaseLeaseRequest{}, ""},
		{"configure without config", b, &lineratev1.ConfigureRequest{}, ""},
	} {
		err := c.b.check(c.req)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.want != "" && err == nil:
			t.Errorf("%s: accepted, want a refusal with %q", c.name, c.want)
		case c.want != "":
			wantKind(t, err, ErrInvalid, c.want, c.name)
		}
	}
}

// TestTuneOutOfRangeCPUOverMTLS is the request: Tune{exclude_cpus:
// [70000]}, which panicked the agent (cpuset.Of), over real gRPC with
// mutual TLS against a real agent: answered InvalidArgument naming the
// field, the value and the host's CPUs, nothing tuned, and the agent
// still serves (a valid Tune and Describe after it).
func TestTuneOutOfRangeCPUOverMTLS(t *testing.T) {
	_, c, root, _ := fixtureAgent(t, 0)
	ctx := ctxT(t, 10*time.Second)
	lease, err := c.AcquireLease(ctx, &lineratev1.AcquireLeaseRequest{CoordinatorId: "coord"})
	if err != nil {
		t.Fatal(err)
	}
	before := affinity(t, root, 41)
	_, err = c.Tune(ctx, &lineratev1.TuneRequest{LeaseId: lease.LeaseId, ExcludeCpus: []int32{70000}})
	wantCode(t, err, codes.InvalidArgument, "Tune exclude_cpus 70000")
	if msg := status.Convert(err).Message(); !strings.Contains(msg, "exclude_cpus[0] 70000: not a CPU of this host, valid CPUs are 0-7") {
		t.Errorf("refusal %q does not name the field, the value and the valid CPUs", msg)
	}
	if got := affinity(t, root, 41); got != before {
		t.Errorf("IRQ 41's affinity changed by a refused Tune: %q, was %q", got, before)
	}
	if _, err := c.Describe(ctx, &lineratev1.DescribeRequest{}); err != nil {
		t.Fatalf("describe after the refusal: %v", err)
	}
	if _, err := c.Tune(ctx, &lineratev1.TuneRequest{LeaseId: lease.LeaseId, ExcludeCpus: []int32{0}}); err != nil {
		t.Fatalf("a valid Tune after the refusal: %v", err)
	}
	if _, err := c.ReleaseLease(ctx, &lineratev1.ReleaseLeaseRequest{LeaseId: lease.LeaseId}); err != nil {
		t.Fatalf("release: %v", err)
	}
}

// TestMessageOverLimit: a request over mtls.MaxRecvMsgSize is refused
// ResourceExhausted by a real agent, which goes on serving.
func TestMessageOverLimit(t *testing.T) {
	_, c, _, _ := fixtureAgent(t, 0)
	ctx := ctxT(t, 10*time.Second)
	big := strings.Repeat("x", 1<<20)
	_, err := c.AcquireLease(ctx, &lineratev1.AcquireLeaseRequest{CoordinatorId: big})
	wantCode(t, err, codes.ResourceExhausted, "a 1 MiB coordinator_id")
	if _, err := c.Describe(ctx, &lineratev1.DescribeRequest{}); err != nil {
		t.Fatalf("describe after the refusal: %v", err)
	}
	if _, err := c.AcquireLease(ctx, &lineratev1.AcquireLeaseRequest{CoordinatorId: strings.Repeat("x", 1<<19)}); err != nil {
		t.Errorf("a 512 KiB coordinator_id, under the limit: %v", err)
	}
}

// TestBoundsOverMTLS: the bounds hold on a real agent over mutual TLS,
// before the lease, role or host are looked at: a count-based send of 317
// years, a stream table and a Watch interval beyond their limits are
// INVALID_ARGUMENT naming the field; an Arm within the limits but over the
// memory budget is RESOURCE_EXHAUSTED; the agent serves on.
func TestBoundsOverMTLS(t *testing.T) {
	_, c, _, _ := fixtureAgent(t, 0)
	ctx := ctxT(t, 10*time.Second)
	lease, err := c.AcquireLease(ctx, &lineratev1.AcquireLeaseRequest{CoordinatorId: "coord"})
	if err != nil {
		t.Fatal(err)
	}
	wantMsg := func(err error, code codes.Code, msg, what string) {
		t.Helper()
		wantCode(t, err, code, what)
		if got := status.Convert(err).Message(); !strings.Contains(got, msg) {
			t.Errorf("%s: %q, want %q in it", what, got, msg)
		}
	}
	_, err = c.Configure(ctx, &lineratev1.ConfigureRequest{LeaseId: lease.LeaseId, Config: &lineratev1.SenderConfig{Count: 1e10, RatePps: 1, DstMin: "198.18.0.2"}})
	wantMsg(err, codes.InvalidArgument, "config.count 10000000000 at config.rate 1 pps (thread 0) would send for 317 years, longer than the agent's maximum run length 24h0m0s (--max-run)", "count 1e10 at 1 pps")
	_, err = c.Arm(ctx, &lineratev1.ArmRequest{LeaseId: lease.LeaseId, MaxStreams: 1 << 17})
	wantMsg(err, codes.InvalidArgument, "max_streams 131072", "max_streams 2^17")
	_, err = c.Arm(ctx, &lineratev1.ArmRequest{LeaseId: lease.LeaseId, MaxStreams: receiver.MaxStreamsLimit, Window: receiver.MaxWindow, Method: string(receiver.MethodAFPacket)})
	wantMsg(err, codes.ResourceExhausted, "65536 streams × a window of 134217728 sequences on", "AF_PACKET over the budget")
	w, err := c.Watch(ctx, &lineratev1.WatchRequest{Interval: durationpb.New(2 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.Recv()
	wantMsg(err, codes.InvalidArgument, "interval 2h0m0s: at most 1h0m0s", "watch every 2 h")
	if _, err := c.Describe(ctx, &lineratev1.DescribeRequest{}); err != nil {
		t.Fatalf("describe after the refusals: %v", err)
	}
}
