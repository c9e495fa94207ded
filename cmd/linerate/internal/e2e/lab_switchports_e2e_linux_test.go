//go:build linux && traffic

package e2e

import (
	"encoding/json"
	"os/exec"
	"testing"

	"github.com/linerate/linerate/cmd/linerate/internal/lab"
)

// labPort is what a lab's switch port counted: the test frames its port
// program saw come in (a sender's port), those of them that came in with
// an 802.1Q tag, its program's drops, and the frames it sent on toward
// its host.
type labPort struct{ test, tagged, drops, tx uint64 }

func (p labPort) sub(b labPort) labPort {
	return labPort{p.test - b.test, p.tagged - b.tagged, p.drops - b.drops, p.tx - b.tx}
}

// labSwitchPorts reads the named ports of lab name's switch from the host
// (ip -j -s link in the switch namespace, the port program by the id of
// the program attached to the port), as the lab's own truth does: for a
// `linerate run` against a lab that is up, whose result has no switch
// counts, read before and after it.
func labSwitchPorts(t *testing.T, name string, ports ...string) map[string]labPort {
	t.Helper()
	out := map[string]labPort{}
	for _, port := range ports {
		o, err := exec.Command("ip", "-n", lab.Prefix(name)+"sw", "-j", "-s", "link", "show", "dev", port).Output()
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
				TX struct {
					Packets uint64 `json:"packets"`
				} `json:"tx"`
			} `json:"stats64"`
		}
		if err := json.Unmarshal(o, &links); err != nil || len(links) != 1 {
			t.Fatalf("switch port %s: ip -j link: %v:\n%s", port, err, o)
		}
		p := labPort{tx: links[0].Stats.TX.Packets}
		if x := links[0].XDP; x != nil {
			st, err := lab.PortStatsOf(port, x.Prog.ID)
			if err != nil {
				t.Fatal(err)
			}
			p.test, p.tagged, p.drops = st.Test, st.Tagged, st.Dropped
		}
		out[port] = p
	}
	return out
}
