package coordinator

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/linerate/linerate/internal/gossip"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// watch streams n's live counters to OnSample; a stream that breaks while
// the run is going fails the run: the agent is gone.
func (st *runState) watch(ctx context.Context, n *node) {
	stream, err := n.c.Watch(ctx, &lineratev1.WatchRequest{Interval: durationpb.New(st.spec.WatchInterval)})
	if err != nil {
		if ctx.Err() == nil {
			st.fail(n.m.Name, fmt.Errorf("watch: %w", err))
		}
		return
	}
	var last *Sample
	frame := st.spec.MeanFrame() + FCSBytes
	for {
		resp, err := stream.Recv()
		if err != nil {
			if ctx.Err() == nil {
				st.fail(n.m.Name, fmt.Errorf("connection lost (watch stream: %w)", err))
			}
			return
		}
		s, ok := sampleOf(resp, n.m.Name, n.role)
		if !ok {
			continue
		}
		if why, failed := sendFailed(resp); failed && n.role == gossip.RoleSender && ctx.Err() == nil {
			st.fail(n.m.Name, fmt.Errorf("send failed: %s", why))
		}
		if last != nil && s.Time.After(last.Time) && s.Packets >= last.Packets {
			dt := s.Time.Sub(last.Time).Seconds()
			s.PPS = float64(s.Packets-last.Packets) / dt
			s.L2BPS = s.PPS * frame * 8
		}
		last = &s
		if st.r.OnSample != nil {
			st.r.OnSample(s)
		}
	}
}
