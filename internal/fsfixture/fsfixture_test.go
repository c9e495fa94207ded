package fsfixture

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sample = `a virtio NIC
-- sys/class/net/eth0 -> ../../devices/pci0000:00/0000:00:03.0/virtio2/net/eth0 --
-- sys/devices/pci0000:00/0000:00:03.0/numa_node --
-1
-- sys/devices/pci0000:00/0000:00:03.0/msi_irqs/ --
-- proc/irq/38/smp_affinity_list mode=0444 --
1
`

func TestParseUnpackPack(t *testing.T) {
	a, err := Parse([]byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	if a.Comment != "a virtio NIC\n" || len(a.Entries) != 4 {
		t.Fatalf("comment %q, %d entries", a.Comment, len(a.Entries))
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sys/devices/pci0000:00/0000:00:03.0/virtio2/net/eth0"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := a.Unpack(dir); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(dir + "/sys/class/net/eth0/../../../numa_node")
	if err != nil || string(got) != "-1\n" {
		t.Fatalf("through the link: %q %v", got, err)
	}
	info, err := os.Stat(filepath.Join(dir, "proc/irq/38/smp_affinity_list"))
	if err != nil || info.Mode().Perm() != 0o444 {
		t.Fatalf("mode: %v %v", info, err)
	}
	packed, err := Pack(dir, "a virtio NIC")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"-- sys/class/net/eth0 -> ../../devices/pci0000:00/0000:00:03.0/virtio2/net/eth0 --",
		"-- sys/devices/pci0000:00/0000:00:03.0/msi_irqs/ --",
		"-- proc/irq/38/smp_affinity_list mode=0444 --\n1\n",
		"-- sys/devices/pci0000:00/0000:00:03.0/virtio2/net/eth0/ --",
	} {
		if !strings.Contains(string(packed), want) {
			t.Errorf("packed archive lacks %q:\n%s", want, packed)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, bad := range []string{
		"-- ../etc/passwd --\n",
		"-- /abs --\n",
		"-- a//b --\n",
		"-- f mode=999 --\n",
		"-- l ->  --\n",
		"-- d/ --\nstray content\n",
	} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%q) succeeded, want an error", bad)
		}
	}
}
