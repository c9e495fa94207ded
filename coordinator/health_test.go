package coordinator

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	grpchealth "google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/linerate/linerate/internal/cluster/gossip"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// healthyAgent serves the health service on loopback, the Agent service
// SERVING.
func healthyAgent(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	hs := grpchealth.NewServer()
	hs.SetServingStatus(lineratev1.Agent_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(srv, hs)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}

// hungAgent accepts connections and never says anything: a process
// stopped, or one too loaded to answer.
func hungAgent(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = lis.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return lis.Addr().String()
}

func plainDial(m Member) (*grpc.ClientConn, error) {
	return grpc.NewClient(m.GRPC, grpc.WithTransportCredentials(insecure.NewCredentials()))
}

// Hung agents, more of them than Check has workers, listed first: the
// healthy ones are still found serving, each hung one is reported
// unreachable at its deadline, and the whole check takes the rounds of
// deadlines the pool needs, not one deadline per hung agent.
func TestCheckHungAgentsDoNotStallOthers(t *testing.T) {
	const timeout = 400 * time.Millisecond
	hung := CheckWorkers + CheckWorkers/2 // two rounds of deadlines
	var ms []Member
	for i := range hung {
		ms = append(ms, Member{Name: "hung" + string(rune('a'+i%26)), Tags: gossip.Tags{GRPC: hungAgent(t)}, Status: "alive"})
	}
	for range 5 {
		ms = append(ms, Member{Name: "ok", Tags: gossip.Tags{GRPC: healthyAgent(t)}, Status: "alive"})
	}
	ms = append(ms, Member{Name: "gone", Tags: gossip.Tags{GRPC: "127.0.0.1:1"}, Status: "failed"})
	t0 := time.Now()
	out := Check(context.Background(), ms, plainDial, timeout)
	d := time.Since(t0)
	if d < 2*timeout || d > 2*timeout+2*time.Second {
		t.Errorf("check of %d hung agents with %d workers took %s: want about %s (two rounds of the deadline)", hung, CheckWorkers, d, 2*timeout)
	}
	for i, m := range out {
		switch {
		case i < hung:
			if !strings.Contains(m.Health, "unreachable") || !strings.Contains(m.Health, "DeadlineExceeded") {
				t.Errorf("hung agent %d: health %q, want unreachable at its deadline", i, m.Health)
			}
		case m.Name == "ok":
			if m.Health != "serving" {
				t.Errorf("healthy agent %d: %q", i, m.Health)
			}
		default:
			if m.Health != "not alive (failed)" {
				t.Errorf("failed member: %q", m.Health)
			}
		}
	}
}
