package coordinator

import "slices"

// PathTruth is what the path itself counted during a run, apart from the
// agents: the known truth a run's books are checked against. The lab's
// switch fills it from its ports (`"lab": {"switch_ports": …}`); a real
// switch's counters could too.
type PathTruth struct {
	SwitchPorts []PortTruth `json:"switch_ports"`
	// Directions are the path's drops of each direction of a run that
	// turns flows round (SplitDirections; absent otherwise).
	Directions []DirectionDrops `json:"directions,omitempty"`
}

// DirectionDrops is what the path dropped of one direction's traffic:
// the frames from that direction's senders their ports dropped on the
// way in, and those toward its receivers their ports dropped on the way
// out.
type DirectionDrops struct {
	Direction Direction `json:"direction"`
	Drops     uint64    `json:"drops"`
}

// PortTruth is one switch port as the switch counted it. Sender ports
// carry the port program (its drops); receiver ports carry the shaper
// (its qdisc drops) and count what left toward the receiver; in a lab
// whose traffic goes both ways every port carries both; in a lab of
// namespaces a port program that drops nothing counts what the
// receiver reflects (--latency rtt).
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
	// DelayUs and JitterUs are the delay added before the port, on its
	// host's egress (a sender's netem in the VM lab): every frame that
	// passes the host's qdisc waits DelayUs ± JitterUs.
	DelayUs  uint64 `json:"delay_us,omitempty"`
	JitterUs uint64 `json:"jitter_us,omitempty"`

	// InDrops are the drops of frames from the port's host (program +
	// rx_dropped), OutDrops of frames toward it (qdisc + tx_dropped):
	// Drops split by the way the frames went (absent when 0, and from
	// documents that predate them).
	InDrops  uint64 `json:"in_drops,omitempty"`
	OutDrops uint64 `json:"out_drops,omitempty"`
	// TaggedPackets are the test frames of TestPackets that came in with
	// an 802.1Q tag (absent when 0): a lab with a VLAN shows its senders
	// tagged every one.
	TaggedPackets uint64 `json:"tagged_test_packets,omitempty"`
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
			p.TaggedPackets -= min(p.TaggedPackets, b.TaggedPackets)
			p.Drops -= min(p.Drops, b.Drops)
			p.QdiscDrops -= min(p.QdiscDrops, b.QdiscDrops)
			p.ProgDrops -= min(p.ProgDrops, b.ProgDrops)
			p.LinkDrops -= min(p.LinkDrops, b.LinkDrops)
			p.InDrops -= min(p.InDrops, b.InDrops)
			p.OutDrops -= min(p.OutDrops, b.OutDrops)
		}
	}
	return out
}

// SplitDirections sets t.Directions from the run's directions (nil: a
// run one way, none): each direction's drops are its senders' ports'
// InDrops and its receivers' ports' OutDrops. A port faces one host, and
// a host sends in one direction only and receives in the other, so no
// drop is counted in both.
func (t *PathTruth) SplitDirections(dirs []DirectionTotal) {
	t.Directions = nil
	for _, d := range dirs {
		dd := DirectionDrops{Direction: d.Direction}
		for _, p := range t.SwitchPorts {
			if slices.Contains(d.Senders, p.Name) {
				dd.Drops += p.InDrops
			}
			if slices.Contains(d.Receivers, p.Name) {
				dd.Drops += p.OutDrops
			}
		}
		t.Directions = append(t.Directions, dd)
	}
}
