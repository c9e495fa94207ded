package topology

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A snapshot of what topology read replays to the same plan elsewhere.
func TestSnapshotReplaysPlan(t *testing.T) {
	r, _ := fixture(t, "apply-basic")
	planJSON := func(root Root) []byte {
		t.Helper()
		n, err := Inspect(root, "eth0")
		if err != nil {
			t.Fatal(err)
		}
		p, err := MakePlan(n, PlanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(PlanReport(p))
		return b
	}
	rec := NewRecorder(r)
	want := planJSON(rec)
	if _, err := ReadInterrupts(rec); err != nil {
		t.Fatal(err)
	}
	if err := rec.WriteFile("/proc/irq/41/smp_affinity_list", []byte("1")); err == nil {
		t.Error("a recorder must refuse writes")
	}
	var buf bytes.Buffer
	if err := rec.WriteTarGz(&buf); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := ExtractTarGz(bytes.NewReader(buf.Bytes()), dir); err != nil {
		t.Fatal(err)
	}
	replay, err := OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer replay.Close()
	if diff := cmp.Diff(string(want), string(planJSON(replay))); diff != "" {
		t.Errorf("replayed plan differs (-want +got):\n%s", diff)
	}
	if _, err := replay.Lstat("/sys/devices/system/node/node1/cpulist"); err == nil {
		t.Error("snapshot holds a file topology never read")
	}
	if b, err := replay.ReadFile("/sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/msi_irqs/41"); err != nil || string(b) != "msix\n" {
		t.Errorf("msi_irqs entry in the snapshot: %q %v", b, err)
	}
	if _, err := ReadInterrupts(replay); err != nil {
		t.Errorf("/proc/interrupts not in the snapshot: %v", err)
	}
}
