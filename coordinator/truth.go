package coordinator

// PathTruth is what the path itself counted during a run, apart from the
// agents: the known truth a run's books are checked against. The lab's
// switch fills it from its ports (`"lab": {"switch_ports": …}`); a real
// switch's counters could too.
type PathTruth struct {
	SwitchPorts []PortTruth `json:"switch_ports"`
}

// PortTruth is one switch port as the switch counted it. Sender ports
// carry the port program (its drops); receiver ports carry the shaper
// (its qdisc drops) and count what left toward the receiver, and in a
// lab of namespaces a port program that drops nothing (it counts what
// the receiver reflects, --latency rtt).
type PortTruth struct {
	Name        string `json:"name"`                // the port: named after the host it faces
	To          string `json:"to"`                  // where its frames go: "switch" (from a sender) or the receiver
	TxPackets   uint64 `json:"tx_packets"`          // frames the port sent on (toward its receiver)
	TestPackets uint64 `json:"test_packets"`        // test frames the port program saw coming in (a sender's; a receiver's reflections)
	Drops       uint64 `json:"drops"`               // everything the port dropped: program + qdisc + link
	QdiscDrops  uint64 `json:"qdisc_drops"`         // the shaper's drops
	ProgDrops   uint64 `json:"program_drops"`       // the lossy program's drops
	LinkDrops   uint64 `json:"link_drops"`          // the port's own rx_dropped + tx_dropped (overload)
	Loss        string `json:"loss,omitempty"`      // the port program's setting
	ShapeBPS    uint64 `json:"shape_bps,omitempty"` // the shaper's rate
}

// Drops is every frame the path dropped.
func (t PathTruth) Drops() uint64 {
	var n uint64
	for _, p := range t.SwitchPorts {
		n += p.Drops
	}
	return n
}

// Sub is t minus an earlier reading base: what happened in between.
// A counter that went backwards (a port recreated) counts from zero.
func (t PathTruth) Sub(base PathTruth) PathTruth {
	out := PathTruth{SwitchPorts: append([]PortTruth(nil), t.SwitchPorts...)}
	for i := range out.SwitchPorts {
		p := &out.SwitchPorts[i]
		for _, b := range base.SwitchPorts {
			if b.Name != p.Name {
				continue
			}
			p.TxPackets -= min(p.TxPackets, b.TxPackets)
			p.TestPackets -= min(p.TestPackets, b.TestPackets)
			p.Drops -= min(p.Drops, b.Drops)
			p.QdiscDrops -= min(p.QdiscDrops, b.QdiscDrops)
			p.ProgDrops -= min(p.ProgDrops, b.ProgDrops)
			p.LinkDrops -= min(p.LinkDrops, b.LinkDrops)
		}
	}
	return out
}
