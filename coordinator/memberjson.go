package coordinator

import (
	"encoding/json"
	"strings"

	"github.com/linerate/linerate/internal/cluster/gossip"
)

// memberJSON is a Member as `linerate members --json` prints it, a
// contract: its tags under these keys, the backends comma-separated as
// serf announces them, and no data addresses.
type memberJSON struct {
	Name      string      `json:"name"`
	Role      gossip.Role `json:"role"`
	Status    string      `json:"status"`
	Gossip    string      `json:"gossip"`
	GRPC      string      `json:"grpc"`
	Iface     string      `json:"iface"`
	NUMA      int         `json:"numa_node"`
	Queues    int         `json:"queues"`
	SpeedMbps int64       `json:"link_speed_mbps"`
	Backends  string      `json:"backends"`
	Version   string      `json:"version"`
	Health    string      `json:"health,omitempty"`
}

// MarshalJSON writes m as `linerate members --json` prints it.
func (m Member) MarshalJSON() ([]byte, error) {
	return json.Marshal(memberJSON{
		Name: m.Name, Role: m.Role, Status: m.Status, Gossip: m.Gossip, GRPC: m.GRPC, Iface: m.Iface, NUMA: m.NUMA,
		Queues: m.Queues, SpeedMbps: m.SpeedMbps, Backends: strings.Join(m.Backends, ","), Version: m.Version, Health: m.Health,
	})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (m *Member) UnmarshalJSON(b []byte) error {
	var j memberJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*m = Member{Name: j.Name, Status: j.Status, Gossip: j.Gossip, Health: j.Health, Tags: gossip.Tags{
		Role: j.Role, GRPC: j.GRPC, Iface: j.Iface, NUMA: j.NUMA, Queues: j.Queues, SpeedMbps: j.SpeedMbps, Version: j.Version,
	}}
	if j.Backends != "" {
		m.Backends = strings.Split(j.Backends, ",")
	}
	return nil
}
