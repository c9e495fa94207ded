package coordinator

import (
	"context"
	"fmt"
	"sync"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// CheckWorkers is how many health checks Check runs at once: enough that
// a fleet of a thousand agents is checked in a few rounds of TLS
// handshakes, few enough that the coordinator's own CPU is not the
// bottleneck it measures.
const CheckWorkers = 32

// Check asks every alive member's health service whether the Agent
// service is serving and fills Member.Health ("serving", or what went
// wrong). CheckWorkers checks run at once, each — connection, TLS
// handshake and call — within timeout: an agent that hangs is reported
// unreachable when its deadline passes and holds up one worker only for
// that long, never the others.
func Check(ctx context.Context, members []Member, dial Dialer, timeout time.Duration) []Member {
	out := append([]Member(nil), members...)
	work := make(chan *Member)
	var wg sync.WaitGroup
	for range min(CheckWorkers, len(out)) {
		wg.Go(func() {
			for m := range work {
				m.Health = health(ctx, *m, dial, timeout)
			}
		})
	}
	for i := range out {
		if out[i].Status != "alive" {
			out[i].Health = "not alive (" + out[i].Status + ")"
			continue
		}
		work <- &out[i]
	}
	close(work)
	wg.Wait()
	return out
}

// health is one member's check, the whole of it within timeout.
func health(ctx context.Context, m Member, dial Dialer, timeout time.Duration) string {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := dial(m)
	if err != nil {
		return err.Error()
	}
	defer conn.Close()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: lineratev1.Agent_ServiceDesc.ServiceName})
	if err != nil {
		return fmt.Sprintf("unreachable: %v", err)
	}
	if resp.Status != healthpb.HealthCheckResponse_SERVING {
		return resp.Status.String()
	}
	return "serving"
}
