//go:build linux && traffic

package e2e

import (
	"encoding/json"
	"os/exec"
	"slices"
	"testing"

	"github.com/linerate/linerate/cmd/linerate/internal/lab"
	"github.com/linerate/linerate/coordinator"
)

// labSwitchPorts reads the named ports of lab name's switch from the host,
// as the lab's own truth (lab.Truth) counts them: the test frames the
// port program saw come in and its drops (the program found by the id of
// the one attached to the port) and how many came tagged, the frames the port sent on toward its
// host and its own rx and tx drops (ip -s link in the switch namespace),
// and its root qdisc's drops (tc -s qdisc; a multiqueue tap's root, mq,
// sums its queues' own). For a `linerate run` against a lab that is up,
// whose result has no switch counts: read before and after it.
func labSwitchPorts(t *testing.T, name string, ports ...string) coordinator.PathTruth {
	t.Helper()
	ns := lab.Prefix(name) + "sw"
	var truth coordinator.PathTruth
	for _, port := range ports {
		o, err := exec.Command("ip", "-n", ns, "-j", "-s", "link", "show", "dev", port).Output()
		if err != nil {
			t.Fatalf("switch port %s: ip link: %v", port, err)
		}
		var links []struct {
			XDP *struct {
				Prog struct {
					ID uint32 `json:"id"`
				} `json:"prog"`
			} `json:"xdp"`
			Stats struct {
				RX struct {
					Dropped uint64 `json:"dropped"`
				} `json:"rx"`
				TX struct {
					Packets uint64 `json:"packets"`
					Dropped uint64 `json:"dropped"`
				} `json:"tx"`
			} `json:"stats64"`
		}
		if err := json.Unmarshal(o, &links); err != nil || len(links) != 1 {
			t.Fatalf("switch port %s: ip -j link: %v:\n%s", port, err, o)
		}
		l := links[0]
		p := coordinator.PortTruth{Name: port, TxPackets: l.Stats.TX.Packets, LinkDrops: l.Stats.RX.Dropped + l.Stats.TX.Dropped,
			InDrops: l.Stats.RX.Dropped, OutDrops: l.Stats.TX.Dropped}
		if x := l.XDP; x != nil {
			st, err := lab.PortStatsOf(port, x.Prog.ID)
			if err != nil {
				t.Fatal(err)
			}
			p.TestPackets, p.ProgDrops, p.TaggedPackets = st.Test, st.Dropped, st.Tagged
		}
		o, err = exec.Command("tc", "-n", ns, "-j", "-s", "qdisc", "show", "dev", port).Output()
		if err != nil {
			t.Fatalf("switch port %s: tc qdisc: %v", port, err)
		}
		var qdiscs []struct {
			Root  bool   `json:"root"`
			Drops uint64 `json:"drops"`
		}
		if err := json.Unmarshal(o, &qdiscs); err != nil {
			t.Fatalf("switch port %s: tc -j qdisc: %v:\n%s", port, err, o)
		}
		for _, q := range qdiscs {
			if q.Root {
				p.QdiscDrops += q.Drops
			}
		}
		p.InDrops += p.ProgDrops
		p.OutDrops += p.QdiscDrops
		p.Drops = p.ProgDrops + p.QdiscDrops + p.LinkDrops
		truth.SwitchPorts = append(truth.SwitchPorts, p)
	}
	return truth
}

// labPortOf is port name of a reading of the switch (labSwitchPorts).
func labPortOf(t *testing.T, truth coordinator.PathTruth, name string) coordinator.PortTruth {
	t.Helper()
	i := slices.IndexFunc(truth.SwitchPorts, func(p coordinator.PortTruth) bool { return p.Name == name })
	if i < 0 {
		t.Fatalf("switch port %s not read: %+v", name, truth.SwitchPorts)
	}
	return truth.SwitchPorts[i]
}
