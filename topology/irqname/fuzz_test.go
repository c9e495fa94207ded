package irqname

import "testing"

func FuzzMatchName(f *testing.F) {
	for _, s := range [][2]string{
		{"eth0", "eth0-TxRx-0"},
		{"eth1", "eth10-TxRx-0"},
		{"ens1f0", "ens1f0np0-TxRx-0"},
		{"eth0", "i40e-eth0-rx-4"},
		{"eth0", "mlx5_comp0@pci:0000:3b:00.0"},
		{"eth0", "mlx5_async0@pci:0000:3b:00.1"},
		{"eth0", "virtio0-input.1"},
		{"eth0", "gve-ntfy-blk7@pci:0000:00:04.0"},
		{"eth0", "eth%d-ntfy-block.3"},
		{"eth0", "hns3-0000:3b:00.0-TxRx-4"},
		{"e.h*", "e.h*-rxtx-1"},
		{"eth0", "eth0-TxRx-99999999999999999999999"},
		{"", ""},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, iface, name string) {
		if len(iface) > 15 || len(name) > 128 {
			t.Skip("longer than IFNAMSIZ-1 / an action name: every new name compiles the pattern table, which would only slow the fuzzer")
		}
		for _, d := range []Device{
			{Iface: iface, Driver: "gve", BDF: "0000:3b:00.0", VirtioDev: "virtio0"},
			{Iface: iface},
		} {
			m := MatchName(d, name)
			checkMatch(t, m)
			if m.Name != name && !(m.Kind == Unknown && m.Name == "") {
				t.Fatalf("MatchName(%q).Name = %q", name, m.Name)
			}
			ms := Classify(d, []Vector{{IRQ: 1, Names: []string{name}}, {IRQ: 2, Names: []string{name, iface}}})
			if len(ms) != 2 {
				t.Fatalf("Classify returned %d matches for 2 vectors", len(ms))
			}
			for _, m := range ms {
				checkMatch(t, m)
			}
		}
	})
}

func checkMatch(t *testing.T, m Match) {
	t.Helper()
	if (m.Queue >= 0) != (m.Kind == Queue) {
		t.Fatalf("Queue %d with Kind %v: %+v", m.Queue, m.Kind, m)
	}
	if (m.Dir != "") != (m.Kind == Queue) {
		t.Fatalf("Dir %q with Kind %v: %+v", m.Dir, m.Kind, m)
	}
	if m.Kind != Queue && m.Reason == "" {
		t.Fatalf("no reason for %v: %+v", m.Kind, m)
	}
}
