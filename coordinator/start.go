package coordinator

import (
	"context"
	"fmt"
	"sync"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/linerate/linerate/internal/cluster/gossip"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// start sets one instant for every sender, far enough ahead that each
// Start call arrives before it, and measures the skew of the reported
// start times.
func (st *runState) start(ctx context.Context) error {
	var starters []Starter
	for _, n := range st.withRole(gossip.RoleSender) {
		starters = append(starters, Starter{Name: n.m.Name, Client: n.c, Lease: n.lease, Offset: n.clock.Known()})
	}
	rep, err := StartAt(ctx, starters, st.spec.StartLead, st.r.CallTimeout)
	if err != nil {
		return err
	}
	for _, n := range st.withRole(gossip.RoleSender) {
		n.started = rep.Started[n.m.Name] // on the coordinator's clock
		t := n.started.UTC()
		n.host.StartedAt = &t
	}
	st.res.StartSkewUS, st.res.StartOffsetP50US, st.res.StartOffsetP99US = rep.SpreadUS, rep.P50US, rep.P99US
	at := rep.At.UTC()
	st.res.StartAt = &at
	st.log.Debug("senders started", "spread_us", rep.SpreadUS, "p50_us", rep.P50US, "p99_us", rep.P99US)
	return nil
}

// Starter is a configured sender to start: its agent's name, a client,
// the lease it was configured under and its clock's offset from the
// coordinator's (Offset.Offset; 0: taken as the same), so that the
// instant it is given is the one instant on its own clock.
type Starter struct {
	Name   string
	Client lineratev1.AgentClient
	Lease  string
	Offset time.Duration
}

// StartReport tells when each sender began against the common instant.
type StartReport struct {
	At      time.Time
	Lead    time.Duration
	Started map[string]time.Time // on the coordinator's clock
	// SpreadUS is the start skew: last start minus first, µs. P50US and
	// P99US are percentiles of each start's lateness after At.
	SpreadUS, P50US, P99US float64
}

// StartAt starts every sender at one instant, lead ahead (0: startLead
// of the slowest round trip of a Clock call, the agent's cheapest: a
// Describe runs the host's checks, which took seconds in a TCG guest and
// made the lead ten times that), each call bounded by callTimeout (0: 30 s),
// and reports the skew. The first failure is returned as an error naming
// the sender (a *failure, which a run keeps as its own).
func StartAt(ctx context.Context, senders []Starter, lead, callTimeout time.Duration) (*StartReport, error) {
	if callTimeout == 0 {
		callTimeout = 30 * time.Second
	}
	if lead == 0 {
		var worst time.Duration
		for _, s := range senders {
			t0 := time.Now()
			cctx, cancel := context.WithTimeout(ctx, callTimeout)
			_, err := s.Client.Clock(cctx, &lineratev1.ClockRequest{})
			cancel()
			if err != nil {
				return nil, &failure{agent: s.Name, phase: PhaseStart, err: fmt.Errorf("read its clock (timing the start): %w", err)}
			}
			worst = max(worst, time.Since(t0))
		}
		lead = startLead(worst)
	}
	rep := &StartReport{At: time.Now().Add(lead), Lead: lead, Started: map[string]time.Time{}}
	var mu sync.Mutex
	err := inParallel(ctx, len(senders), func(i int) error {
		s := senders[i]
		cctx, cancel := context.WithTimeout(ctx, lead+callTimeout)
		defer cancel()
		resp, err := s.Client.Start(cctx, &lineratev1.StartRequest{LeaseId: s.Lease, At: timestamppb.New(rep.At.Add(s.Offset))})
		if err != nil {
			return &failure{agent: s.Name, phase: PhaseStart, err: fmt.Errorf("start: %w", err)}
		}
		mu.Lock()
		rep.Started[s.Name] = resp.StartedAt.AsTime().Add(-s.Offset) // on the coordinator's clock
		mu.Unlock()
		return nil
	})
	if err != nil {
		return nil, err
	}
	rep.SpreadUS, rep.P50US, rep.P99US = skewOf(rep.At, rep.Started)
	return rep, nil
}
