package topology

import (
	"strings"
	"testing"
)

// What apply and restore did reads as a title per journal (its owner
// when it has one) over its changes; no journal says so.
func TestWriteAppliedAndRestored(t *testing.T) {
	var b strings.Builder
	if err := WriteRestores(&b, "/var/lib/linerate", nil); err != nil || b.String() != "nothing to restore: no journal in /var/lib/linerate\n" {
		t.Errorf("no journal: %q %v", b.String(), err)
	}
	b.Reset()
	changes := []Change{{IRQ: 41, Name: "eth0-TxRx-0", From: "0-3", To: "0", Status: "restored"}}
	res := []RestoreResult{{Iface: "eth0", Journal: "/s/irq-eth0.json", Owner: "irq apply", Changes: changes}, {Iface: "eth1", Journal: "/s/irq-eth1.json"}}
	if err := WriteRestores(&b, "/s", res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"eth0: restored from /s/irq-eth0.json (written by irq apply)\n", "41   eth0-TxRx-0", "eth1: restored from /s/irq-eth1.json\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("restored lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	a := &ApplyResult{Iface: "eth0", Journal: "/s/irq-eth0.json", Changes: changes, Warnings: []string{"irqbalance runs"}}
	if err := a.WriteTable(&b); err != nil || !strings.HasPrefix(b.String(), "eth0: journal /s/irq-eth0.json\n") || !strings.Contains(b.String(), "warning: irqbalance runs") {
		t.Errorf("applied: %q %v", b.String(), err)
	}
}
