//go:build linux

package topology

import (
	"os"
	"strings"
	"testing"

	"github.com/linerate/linerate/topology/cpuset"
)

// TestLiveHost inspects and plans every interface of this machine that has
// a device, read-only. On the lab machine that is a virtio NIC whose IRQs
// sit on the PCI parent of the virtio device.
func TestLiveHost(t *testing.T) {
	r, err := OpenRoot("/")
	if err != nil {
		t.Skipf("cannot open /: %v", err)
	}
	defer r.Close()
	ents, err := os.ReadDir("/sys/class/net")
	if err != nil {
		t.Skipf("no /sys/class/net: %v", err)
	}
	irqs, err := ReadInterrupts(r)
	if err != nil {
		t.Fatalf("parse this host's /proc/interrupts: %v", err)
	}
	tested := 0
	for _, e := range ents {
		if _, err := os.Stat("/sys/class/net/" + e.Name() + "/device"); err != nil {
			continue
		}
		tested++
		n, err := Inspect(r, e.Name())
		if err != nil {
			t.Errorf("inspect %s: %v", e.Name(), err)
			continue
		}
		if n.LocalCPUs.IsEmpty() || !n.LocalCPUs.IsSubsetOf(n.OnlineCPUs) {
			t.Errorf("%s: local CPUs %s not a non-empty subset of online %s", n.Iface, n.LocalCPUs, n.OnlineCPUs)
		}
		for _, v := range n.Vectors {
			row, ok := irqs.ByNumber(v.IRQ)
			if !ok || !row.HasAction(v.Name) {
				t.Errorf("%s: queue irq %d (%s) not in /proc/interrupts under that name", n.Iface, v.IRQ, v.Name)
			}
			if _, err := cpuset.ParseList(v.Current, 0); err != nil {
				t.Errorf("%s: irq %d current affinity %q: %v", n.Iface, v.IRQ, v.Current, err)
			}
		}
		if n.VirtioDev != "" {
			if n.PCI == "" || len(n.Vectors) == 0 || !strings.HasPrefix(n.Vectors[0].Name, n.VirtioDev+"-") {
				t.Errorf("virtio %s: pci %q vectors %+v", n.Iface, n.PCI, n.Vectors)
			}
		}
		p, err := MakePlan(n, PlanOptions{})
		if err != nil {
			t.Errorf("plan %s: %v", n.Iface, err)
			continue
		}
		for _, a := range p.Assignments {
			if !n.LocalCPUs.Contains(a.CPU) {
				t.Errorf("%s: irq %d planned on non-local cpu %d", n.Iface, a.IRQ, a.CPU)
			}
		}
		t.Logf("%s: driver %s pci %s node %d local %s: %d queue irqs, %d skipped", n.Iface, n.Driver, n.PCI, n.NUMANode, n.LocalCPUs, len(n.Vectors), len(n.Skipped))
	}
	if tested == 0 {
		t.Skip("this host has no interface with a device")
	}
}
