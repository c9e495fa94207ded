package agent

import (
	"net"
	"testing"
	"time"
)

// Whoever finds the Agent service's port open can join the agent's
// gossip at once: gossip is bound before the gRPC port opens (a probe
// dials the gRPC port as fast as it can while the agent starts, and the
// moment it connects, dials gossip).
func TestGossipBoundBeforeGRPC(t *testing.T) {
	certs := testCerts(t)
	grpcAddr, gossipAddr := freeGossipAddr(t), freeGossipAddr(t)
	seen := make(chan error, 1)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			c, err := net.DialTimeout("tcp", grpcAddr, 100*time.Millisecond)
			if err != nil {
				// Not open yet: again soon, without taking a CPU the
				// agent's start needs (2 here).
				time.Sleep(200 * time.Microsecond)
				continue
			}
			_ = c.Close()
			g, err := net.DialTimeout("tcp", gossipAddr, time.Second)
			if err == nil {
				_ = g.Close()
			}
			seen <- err
			return
		}
	}()
	startAgent(t, Config{Name: "order", Role: RoleReceiver, Iface: "lo", GRPCAddr: grpcAddr, Bind: gossipAddr, serfHook: fastSerf}, certs)
	select {
	case err := <-seen:
		if err != nil {
			t.Errorf("the gRPC port %s was open before gossip %s was bound: %v", grpcAddr, gossipAddr, err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the probe never reached the gRPC port")
	}
}
