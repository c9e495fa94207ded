package agent

import (
	"context"
	"net/netip"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/durationpb"

	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
	"github.com/linerate/linerate/receiver"
)

// slowCounter is a receiver whose Stop blocks until release (the final
// scans of a large bitmap).
type slowCounter struct {
	stopping chan struct{} // closed when Stop is entered
	release  *gate
}

// gate is a channel closed once, by open or at the end of the test.
type gate struct {
	C    chan struct{}
	once sync.Once
}

func newGate(t *testing.T) *gate {
	g := &gate{C: make(chan struct{})}
	t.Cleanup(g.open)
	return g
}

func (g *gate) open() { g.once.Do(func() { close(g.C) }) }

func (slowCounter) Method() (receiver.Method, string) { return "fake", "a test hook" }
func (slowCounter) XDPMode() string                   { return "" }
func (slowCounter) Snapshot() receiver.Report {
	return receiver.Report{Streams: []receiver.StreamReport{{Src: netip.MustParseAddr("198.18.0.1"), Received: 5}}}
}
func (c slowCounter) Stop() (*receiver.Report, error) {
	close(c.stopping)
	<-c.release.C
	return &receiver.Report{Streams: []receiver.StreamReport{{Src: netip.MustParseAddr("198.18.0.1"), Received: 9}}}, nil
}
func (slowCounter) Close() error { return nil }

// An Arm blocked in its load (the XDP program) and a Collect blocked in
// its final scans hold up neither Describe, RenewLease, Stop nor the
// Watch samples, over real mTLS gRPC: each answers while the slow call is
// still blocked.
func TestSlowArmAndCollectHoldUpNothing(t *testing.T) {
	certs := testCerts(t)
	a := startAgent(t, Config{Name: "agent1", Role: RoleReceiver, Iface: "lo", AllowMgmtIface: true}, certs)
	loading, load := make(chan struct{}), newGate(t)
	rx := slowCounter{stopping: make(chan struct{}), release: newGate(t)}
	a.svc.rx.start = func(context.Context, receiver.Options) (counter, error) {
		close(loading)
		<-load.C
		return rx, nil
	}
	c := dial(t, a, certs, "coord")
	ctx := ctxT(t, 20*time.Second)
	l, err := c.AcquireLease(ctx, &lineratev1.AcquireLeaseRequest{CoordinatorId: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	watch, err := c.Watch(ctx, &lineratev1.WatchRequest{Interval: durationpb.New(minWatchInterval)})
	if err != nil {
		t.Fatal(err)
	}
	samples := make(chan *lineratev1.WatchResponse)
	go func() {
		for {
			s, err := watch.Recv()
			if err != nil {
				close(samples)
				return
			}
			select {
			case samples <- s:
			case <-ctx.Done():
				return
			}
		}
	}()
	sample := func(what string) *lineratev1.ReceiverSample {
		t.Helper()
		select {
		case s, ok := <-samples:
			if !ok {
				t.Fatalf("%s: the watch ended", what)
			}
			return s.Receiver
		case <-time.After(3 * time.Second):
			t.Fatalf("%s: no watch sample within 3s", what)
		}
		return nil
	}
	sample("before the arm")

	// answers checks that every call answers within 3 s while blocked
	// (the slow call) has not returned.
	answers := func(what string, blocked <-chan error, phase lineratev1.Phase, packets uint64) {
		t.Helper()
		cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		if _, err := c.Describe(cctx, &lineratev1.DescribeRequest{}); err != nil {
			t.Errorf("%s: describe: %v", what, err)
		}
		if _, err := c.RenewLease(cctx, &lineratev1.RenewLeaseRequest{LeaseId: l.LeaseId}); err != nil {
			t.Errorf("%s: renew: %v", what, err)
		}
		if _, err := c.Stop(cctx, &lineratev1.StopRequest{LeaseId: l.LeaseId}); err != nil {
			t.Errorf("%s: stop: %v", what, err)
		}
		for i := range 2 { // a fresh sample, not one sent before
			if s := sample(what); i == 1 && (s.Phase != phase || s.Packets != packets) {
				t.Errorf("%s: watch sample %v, want %s with %d packets", what, s, phase, packets)
			}
		}
		select {
		case err := <-blocked:
			t.Fatalf("%s: the slow call returned (%v) before the others answered: not a test of them", what, err)
		default:
		}
	}

	armed := make(chan error, 1)
	go func() {
		_, err := c.Arm(ctx, &lineratev1.ArmRequest{LeaseId: l.LeaseId})
		armed <- err
	}()
	<-loading
	answers("an arm loading", armed, lineratev1.Phase_PHASE_IDLE, 0)
	load.open()
	if err := <-armed; err != nil {
		t.Fatal(err)
	}
	for s := sample("armed"); s.Phase != lineratev1.Phase_PHASE_ARMED; s = sample("armed") {
	}

	collected := make(chan error, 1)
	go func() {
		rep, err := c.Collect(ctx, &lineratev1.CollectRequest{LeaseId: l.LeaseId})
		if err == nil && rep.GetReport().GetStreams()[0].GetReceived() != 9 {
			t.Errorf("collect: %v, want the final 9 packets", rep)
		}
		collected <- err
	}()
	<-rx.stopping
	answers("a collect stopping", collected, lineratev1.Phase_PHASE_ARMED, 5)
	rx.release.open()
	if err := <-collected; err != nil {
		t.Fatal(err)
	}
	for s := sample("collected"); s.Phase != lineratev1.Phase_PHASE_IDLE; s = sample("collected") {
	}
}

// A lease released while its Arm is blocked in the load ends at once
// (Describe shows no holder, a call with it is refused) rather than when
// the load returns; the Arm, once loaded, is undone and refused.
func TestReleaseDuringASlowArm(t *testing.T) {
	certs := testCerts(t)
	a := startAgent(t, Config{Name: "agent1", Role: RoleReceiver, Iface: "lo", AllowMgmtIface: true}, certs)
	loading, load := make(chan struct{}), newGate(t)
	a.svc.rx.start = func(context.Context, receiver.Options) (counter, error) {
		close(loading)
		<-load.C
		return slowCounter{stopping: make(chan struct{}), release: newGate(t)}, nil
	}
	c := dial(t, a, certs, "coord")
	ctx := ctxT(t, 20*time.Second)
	l, err := c.AcquireLease(ctx, &lineratev1.AcquireLeaseRequest{CoordinatorId: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	armed := make(chan error, 1)
	go func() {
		_, err := c.Arm(ctx, &lineratev1.ArmRequest{LeaseId: l.LeaseId})
		armed <- err
	}()
	<-loading
	released := make(chan error, 1)
	go func() {
		_, err := c.ReleaseLease(ctx, &lineratev1.ReleaseLeaseRequest{LeaseId: l.LeaseId})
		released <- err
	}()
	poll(t, 3*time.Second, "the lease ends while the arm loads", func() bool {
		d, err := c.Describe(ctx, &lineratev1.DescribeRequest{})
		return err == nil && d.Lease == nil
	})
	_, err = c.Stop(ctx, &lineratev1.StopRequest{LeaseId: l.LeaseId})
	wantCode(t, err, codes.FailedPrecondition, "stop with the released lease")
	select {
	case err := <-armed:
		t.Fatalf("the arm returned (%v) before its load: not a test of it", err)
	default:
	}
	load.open()
	wantCode(t, <-armed, codes.FailedPrecondition, "an arm whose lease ended during its load")
	if err := <-released; err != nil {
		t.Errorf("release: %v", err)
	}
	if st := a.svc.rx.state(); st.phase != phaseIdle {
		t.Errorf("after the undone arm: %s, want idle", st.phase)
	}
}
