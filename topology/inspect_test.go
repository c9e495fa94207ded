package topology

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestInspect(t *testing.T) {
	for _, c := range inspectCases {
		t.Run(c.fixture+"/"+c.iface, func(t *testing.T) {
			t.Parallel()
			r, _ := fixture(t, c.fixture)
			n, err := Inspect(r, c.iface)
			if err != nil {
				t.Fatalf("Inspect: %v", err)
			}
			if n.Iface != c.iface || n.Driver != c.driver || n.PCI != c.pci || n.NUMANode != c.node {
				t.Errorf("iface %q driver %q pci %q node %d, want %q %q %q %d",
					n.Iface, n.Driver, n.PCI, n.NUMANode, c.iface, c.driver, c.pci, c.node)
			}
			if got := n.LocalCPUs.String(); got != c.local {
				t.Errorf("local CPUs %s, want %s", got, c.local)
			}
			if !n.LocalCPUs.IsSubsetOf(n.OnlineCPUs) {
				t.Errorf("local CPUs %s not all online (%s)", n.LocalCPUs, n.OnlineCPUs)
			}
			if n.IRQSource != c.source {
				t.Errorf("IRQSource %q, want %q", n.IRQSource, c.source)
			}
			if n.RxQueues != c.rx || n.TxQueues != c.tx {
				t.Errorf("queues rx %d tx %d, want %d %d", n.RxQueues, n.TxQueues, c.rx, c.tx)
			}

			var got []wantVec
			for _, v := range n.Vectors {
				got = append(got, wantVec{v.Queue, v.Dir, v.IRQ, v.Name})
			}
			if fmt.Sprint(got) != fmt.Sprint(c.vecs) {
				t.Errorf("vectors:\n got  %v\n want %v", got, c.vecs)
			}

			if len(n.Skipped) != len(c.skipped) {
				t.Errorf("skipped %v, want %d entries %v", n.Skipped, len(c.skipped), c.skipped)
			} else {
				for i, w := range c.skipped {
					s := n.Skipped[i]
					if s.IRQ != w.irq || s.Name != w.name || !strings.Contains(s.Reason, w.reason) {
						t.Errorf("skipped[%d] = %+v, want irq %d name %q reason containing %q", i, s, w.irq, w.name, w.reason)
					}
				}
			}

			if len(n.Warnings) != len(c.warnings) {
				t.Errorf("warnings %q, want %d containing %q", n.Warnings, len(c.warnings), c.warnings)
			} else {
				for i, w := range c.warnings {
					if !strings.Contains(n.Warnings[i], w) {
						t.Errorf("warning[%d] = %q, want it to contain %q", i, n.Warnings[i], w)
					}
				}
			}
			if n.Queues() != distinctQueues(c.vecs) {
				t.Errorf("Queues() = %d, want %d", n.Queues(), distinctQueues(c.vecs))
			}
			if c.check != nil {
				c.check(t, n)
			}
		})
	}
}

func distinctQueues(vs []wantVec) int {
	seen := map[int]bool{}
	for _, v := range vs {
		seen[v.queue] = true
	}
	return len(seen)
}

// TestInspectNotManaged checks that writable smp_affinity_list files are
// not managed.
func TestInspectNotManaged(t *testing.T) {
	r, _ := fixture(t, "mlx5-new")
	n, err := Inspect(r, "ens1f0np0")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range n.Vectors {
		if v.Managed {
			t.Errorf("irq %d: Managed = true for a 0644 smp_affinity_list", v.IRQ)
		}
	}
}

func TestInspectErrors(t *testing.T) {
	r, _ := fixture(t, "virtual")
	const all = "br0, docker0, eth0, lo, veth4c1e2f3"
	for _, c := range []struct {
		iface   string
		want    error
		message []string
	}{
		{"br0", ErrNoDevice, []string{`"br0"`, "virtual interface", "interfaces with a device: eth0"}},
		{"docker0", ErrNoDevice, []string{"interfaces with a device: eth0"}},
		{"lo", ErrNoDevice, []string{`"lo"`}},
		{"veth4c1e2f3", ErrNoDevice, []string{"veth4c1e2f3"}},
		{"eth9", ErrNoInterface, []string{`"eth9"`, "valid: " + all}},
		{"eth", ErrNoInterface, []string{all}},
		{"", ErrNoInterface, []string{all}},
		{"..", ErrNoInterface, []string{all}},
		{"../../devices", ErrNoInterface, nil},
		{"eth0/device", ErrNoInterface, nil},
	} {
		n, err := Inspect(r, c.iface)
		if !errors.Is(err, c.want) {
			t.Errorf("Inspect(%q) = %v, %v; want %v", c.iface, n, err, c.want)
			continue
		}
		for _, m := range c.message {
			if !strings.Contains(err.Error(), m) {
				t.Errorf("Inspect(%q) error %q does not mention %q", c.iface, err, m)
			}
		}
	}
}

// knownParseBugs are fixtures whose /proc/interrupts topology/interrupts
