package coordinator

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/linerate/linerate/internal/cluster/gossip"
	"github.com/linerate/linerate/pktgen"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// watch streams n's live counters to OnSample; a stream that breaks, or
// stays silent for watchSilence, while the run is going fails the run:
// the agent is gone. A host that vanishes (powered off, its VM killed)
// sends no reset: without the silence bound its stream would only break
// at the connection's keepalive, tens of seconds later.
func (st *runState) watch(ctx context.Context, n *node) {
	stream, err := n.c.Watch(ctx, &lineratev1.WatchRequest{Interval: durationpb.New(st.spec.WatchInterval)})
	if err != nil {
		if ctx.Err() == nil {
			st.fail(n.m.Name, fmt.Errorf("watch: %w", err))
		}
		return
	}
	silence := watchSilence(st.spec.WatchInterval)
	quiet := time.AfterFunc(silence, func() {
		if ctx.Err() == nil {
			st.lost(n, fmt.Errorf("connection lost: no live counters for %s (every %s asked): the host stopped answering", silence, st.spec.WatchInterval))
		}
	})
	defer quiet.Stop()
	// A host that sends and receives gives a sample of each role.
	var roles []gossip.Role
	for _, r := range []gossip.Role{gossip.RoleSender, gossip.RoleReceiver} {
		if r == n.role || n.role == gossip.RoleBoth {
			roles = append(roles, r)
		}
	}
	last := map[gossip.Role]*Sample{}
	frame := st.spec.MeanFrame() + pktgen.FCSBytes
	for {
		resp, err := stream.Recv()
		if err != nil {
			if ctx.Err() == nil {
				st.lost(n, fmt.Errorf("connection lost (watch stream: %w)", err))
			}
			return
		}
		quiet.Reset(silence)
		if why, failed := sendFailed(resp); failed && n.role.Sends() && ctx.Err() == nil {
			st.fail(n.m.Name, fmt.Errorf("send failed: %s", why))
		}
		for _, role := range roles {
			s, ok := sampleOf(resp, n.m.Name, role, st.senderOfPort)
			if !ok {
				continue
			}
			if l := last[role]; l != nil && s.Time.After(l.Time) && s.Packets >= l.Packets {
				dt := s.Time.Sub(l.Time).Seconds()
				s.PPS = float64(s.Packets-l.Packets) / dt
				s.L2BPS = s.PPS * frame * 8
			}
			last[role] = &s
			if st.r.OnSample != nil {
				st.r.OnSample(s)
			}
		}
	}
}

// watchSilence is how long a live stream asked for a sample every
// interval may stay silent before its host counts as gone: five
// intervals, at least 4 s (a loaded host's samples come late, not never).
func watchSilence(interval time.Duration) time.Duration {
	return max(5*interval, 4*time.Second)
}
