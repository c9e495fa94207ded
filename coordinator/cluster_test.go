package coordinator

import (
	"encoding/json"
	"net"
	"testing"

	"github.com/hashicorp/serf/serf"

	"github.com/linerate/linerate/internal/gossip"
)

// A member reads its tags through gossip.DecodeTags, and its JSON
// (`linerate members --json`) keeps the role a string.
func TestMemberOf(t *testing.T) {
	tags, err := gossip.Tags{Role: gossip.RoleBoth, GRPC: "10.0.0.1:7947", Iface: "eth1", NUMA: 1, Queues: 8, SpeedMbps: 25000,
		Backends: []string{"kernel", "xdp"}, Version: "v1"}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	m := memberOf(serf.Member{Name: "a1", Addr: net.ParseIP("10.0.0.1"), Port: 7946, Tags: tags, Status: serf.StatusAlive})
	b, _ := json.Marshal(m)
	want := `{"name":"a1","role":"both","status":"alive","gossip":"10.0.0.1:7946","grpc":"10.0.0.1:7947","iface":"eth1","numa_node":1,"queues":8,"link_speed_mbps":25000,"backends":"kernel,xdp","version":"v1"}`
	if string(b) != want {
		t.Errorf("member JSON\n %s\nwant\n %s", b, want)
	}
	if !m.Sends() || !m.Receives() {
		t.Errorf("role both: sends %t receives %t", m.Sends(), m.Receives())
	}
	sel := m.Tags().Selectable()
	if sel["role"] != "both" || sel["numa"] != "1" || sel["backend"] != "kernel,xdp" || sel["speed"] != "25000" {
		t.Errorf("selectable tags %v", sel)
	}
}
