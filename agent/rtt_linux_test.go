//go:build linux && traffic

package agent

import (
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// TestRTTStopped drives a sender agent (lra) and a receiver agent (lrb)
// over mutual-TLS gRPC through a send with a latency stream (Configure's
// rtt) that runs until it is stopped, as a coordinator stops a run cut
// short: the receiver reflects it (Arm's reflect_ports), and the sender's
// result has it whole: what it sent was received and reflected, and every
// reflection came back and was timed, on the sender's own clock, with a
// lowest round trip for each second. (A veth returns a frame within
// microseconds: this does not tell whether the returns' receiver outlives
// the Stop by rttDrain; a slower path would.)
func TestRTTStopped(t *testing.T) {
	p, _, _, sc, rc := pairAgents(t)
	ctx := ctxT(t, 30*time.Second)
	// One coordinator's leases on both: the sender's, then the receiver's.
	var lease [2]string
	for i, c := range []lineratev1.AgentClient{sc, rc} {
		l, err := c.AcquireLease(ctx, &lineratev1.AcquireLeaseRequest{CoordinatorId: "c1"})
		if err != nil {
			t.Fatal(err)
		}
		lease[i] = l.LeaseId
	}
	sl, rl := lease[0], lease[1]
	const port = 10001
	if _, err := rc.Arm(ctx, &lineratev1.ArmRequest{LeaseId: rl, Method: "xdp", ReflectPorts: []uint32{port}}); err != nil {
		t.Fatal(err)
	}
	if _, err := sc.Configure(ctx, &lineratev1.ConfigureRequest{LeaseId: sl, Config: &lineratev1.SenderConfig{
		Cpus: []int32{0}, Duration: durationpb.New(time.Minute), RatePps: 5000, PktSize: 60, DstMin: "198.18.0.2", DstMac: p.B.MAC.String(), Backend: "afpacket",
	}, Rtt: &lineratev1.RttStream{Port: port, RatePps: 2000}}); err != nil {
		t.Fatal(err)
	}
	if _, err := sc.Start(ctx, &lineratev1.StartRequest{LeaseId: sl, At: timestamppb.New(time.Now().Add(100 * time.Millisecond))}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2500 * time.Millisecond)
	if st, err := sc.Stop(ctx, &lineratev1.StopRequest{LeaseId: sl}); err != nil || !st.Stopped {
		t.Fatalf("stop: %v %v", st, err)
	}
	res, err := sc.Result(ctx, &lineratev1.ResultRequest{LeaseId: sl, Wait: true})
	if err != nil {
		t.Fatal(err)
	}
	col, err := rc.Collect(ctx, &lineratev1.CollectRequest{LeaseId: rl})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rtt) != 1 {
		t.Fatalf("round trips: %v (warnings %v)", res.Rtt, res.Summary.GetWarnings())
	}
	r := res.Rtt[0]
	var out *lineratev1.StreamReport
	for _, s := range col.Report.Streams {
		if s.DstPort == port {
			out = s
		}
	}
	back := r.Returned
	// 2.4 s at 2,000 pps.
	if r.Dst != "198.18.0.2" || r.Port != port || r.Sent < 4000 || r.Sent > 5200 || out == nil || back == nil {
		t.Fatalf("latency stream %v; the receiver's %v", r, out)
	}
	if out.Received != r.Sent || out.Reflected != r.Sent || back.Received != r.Sent || back.Src != "198.18.0.2" || back.Dst != "198.18.0.1" {
		t.Errorf("sent %d; received %d, reflected %d; returned %d (%s → %s): want all equal", r.Sent, out.Received, out.Reflected, back.Received, back.Src, back.Dst)
	}
	if l := back.Latency; l == nil || l.Clock != "same-host" || l.Negative != 0 || l.MinUs == 0 || len(r.LowestUs) < 2 {
		t.Errorf("round trips %v, lowest per second %v", l, r.LowestUs)
	}
	t.Logf("FIGURE rtt through agents, stopped: %d sent, %d received, %d returned, min %d µs, max %d µs; lowest per second %v µs", r.Sent, out.Received, back.Received, back.Latency.GetMinUs(), back.Latency.GetMaxUs(), r.LowestUs)
}
