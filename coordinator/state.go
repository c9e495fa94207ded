package coordinator

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"

	"github.com/linerate/linerate/doctor"
	"github.com/linerate/linerate/internal/cluster/gossip"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
	recv "github.com/linerate/linerate/receiver"
)

// node is one agent taking part in the run.
type node struct {
	m        Member
	role     gossip.Role // RoleSender, RoleReceiver or RoleBoth in this run (roleIn)
	conn     *grpc.ClientConn
	c        lineratev1.AgentClient
	lease    string
	host     *Host
	nic      nicFacts
	dst      netip.Addr // receivers: the data address flows are sent to
	flowOf   []int      // sender: the flow (index into pairs) of each thread
	sent     *senderReport
	rtt      []senderRTT // sender: its latency streams (latency rtt)
	received *recv.Report
	size     receiverSize // receivers: how it was armed
	started  time.Time
	// clock and clockAfter are the agent's clock against the
	// coordinator's before the traffic and after it (nil: not measured).
	clock, clockAfter *Offset
	stopOnce          sync.Once
	// gone: the run lost this host (its connection went quiet or broke,
	// gossip declared it failed or it left): cleanup gives its calls
	// goneBudget only; if it cannot answer, its agent restores by itself
	// when its lease lapses.
	gone atomic.Bool
	// changed are how its volatile checks changed during the run
	// (reread).
	changed []string
	// allowFixes are the fix classes its agent's --allow-fixes allows
	// (its preflight Describe's).
	allowFixes []string
	// settled are its checks read again after --preflight fix changed
	// some (nil: not read again): the baseline reread compares with.
	settled []doctor.Check
}

// runState is one run in progress.
type runState struct {
	r      *Runner
	spec   Spec
	log    hclog.Logger
	res    *Result
	nodes  map[string]*node
	order  []*node // the named senders then the named receivers
	pairs  []Pair
	phase  atomic.Value
	cancel context.CancelCauseFunc
	mu     sync.Mutex
}

// failure is why a run ended early: which agent, in which phase.
type failure struct {
	agent, phase string
	err          error
}

func (f *failure) Error() string {
	if f.agent == "" {
		return fmt.Sprintf("%s: %v", f.phase, f.err)
	}
	return fmt.Sprintf("agent %s, phase %s: %v", f.agent, f.phase, f.err)
}
func (f *failure) Unwrap() error { return f.err }

func newRunID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

func (st *runState) setPhase(p string) {
	st.phase.Store(p)
	st.log.Info("phase", "phase", p)
	if st.r.OnPhase != nil {
		st.r.OnPhase(PhaseEvent{Event: EventPhase, Time: time.Now().UTC(), Phase: p})
	}
}

func (st *runState) currentPhase() string { return st.phase.Load().(string) }

// fail ends the run with agent's error in the current phase.
func (st *runState) fail(agent string, err error) {
	st.cancel(&failure{agent: agent, phase: st.currentPhase(), err: err})
}

// lost fails the run because host n is gone, and marks it so.
func (st *runState) lost(n *node, err error) {
	n.gone.Store(true)
	st.fail(n.m.Name, err)
}

// each runs fn on every node concurrently and returns the first failure
// (as a *failure naming the node).
func (st *runState) each(ctx context.Context, nodes []*node, fn func(ctx context.Context, n *node) error) error {
	return inParallel(ctx, len(nodes), func(i int) error {
		if err := fn(ctx, nodes[i]); err != nil {
			return &failure{agent: nodes[i].m.Name, phase: st.currentPhase(), err: err}
		}
		return nil
	})
}

// inParallel runs fn(0..n-1) concurrently and returns the first error in
// index order — or, when ctx was cancelled meanwhile (another agent
// failed, or Ctrl-C), its cause: the calls in flight failed with it.
func inParallel(ctx context.Context, n int, fn func(i int) error) error {
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fn(i)
		}()
	}
	wg.Wait()
	if cause := context.Cause(ctx); cause != nil {
		return cause
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// unary makes one call of the Agent service within the call timeout; a
// failure says which call (what) failed.
func unary[Req, Resp any](ctx context.Context, st *runState, what string, rpc func(context.Context, Req, ...grpc.CallOption) (Resp, error), req Req) (Resp, error) {
	cctx, cancel := context.WithTimeout(ctx, st.r.CallTimeout)
	defer cancel()
	resp, err := rpc(cctx, req)
	if err != nil {
		return resp, fmt.Errorf("%s: %w", what, err)
	}
	return resp, nil
}

// withRole are the run's nodes that play role (RoleSender: every node
// that sends, RoleReceiver: every node that receives, a node of role
// both among either), in run order.
func (st *runState) withRole(role gossip.Role) []*node {
	var out []*node
	for _, n := range st.order {
		if role == gossip.RoleSender && n.role.Sends() || role == gossip.RoleReceiver && n.role.Receives() {
			out = append(out, n)
		}
	}
	return out
}

// leaseOf is n's lease, read under the lock (acquire writes it while
// cleanup may read it).
func (st *runState) leaseOf(n *node) string {
	st.mu.Lock()
	defer st.mu.Unlock()
	return n.lease
}
