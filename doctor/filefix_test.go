package doctor

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/linerate/linerate/topology"
)

// fileFixCase is one fix class applied to a fixture: the files it must
// change (host path → content after the fix) and the check that must then
// pass.
type fileFixCase struct {
	name    string
	trees   []string
	class   FixClass
	check   string
	changed map[string]string // real path in the tree → content after
	kept    []string          // real paths the fix must leave alone
}

// TestFileFixes applies fixGovernor and fixRPS to fixture roots: each
// write is journaled, the check then passes, a second fix changes nothing,
// and topology.Restore with the journal puts back every original byte
// for byte.
func TestFileFixes(t *testing.T) {
	const hostEth0 = "sys/devices/pci0000:00/0000:00:03.0/virtio2/net/eth0"
	for _, tc := range []fileFixCase{
		{name: "governor", trees: []string{host, edit("cpufreq-powersave")}, class: FixGovernor, check: "governor",
			// The plan puts eth0's one queue on CPU 0: CPU 1 is not the run's.
			changed: map[string]string{"sys/devices/system/cpu/cpu0/cpufreq/scaling_governor": "performance\n"},
			kept:    []string{"sys/devices/system/cpu/cpu1/cpufreq/scaling_governor"}},
		{name: "rps", trees: []string{host, edit("rps")}, class: FixRPS, check: "steering",
			changed: map[string]string{hostEth0 + "/queues/rx-0/rps_cpus": "0\n"},
			kept:    []string{hostEth0 + "/queues/tx-0/xps_rxqs"}},
		// The check passes a mask of the queue's planned CPU alone, so the
		// fix leaves it.
		{name: "rps to the queue's own CPU is left alone", trees: []string{host, edit("rps-own")}, class: FixRPS, check: "steering",
			kept: []string{hostEth0 + "/queues/rx-0/rps_cpus"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, dir := fixtureRoot(t, tc.trees...)
			state := t.TempDir()
			h := Host{Root: r, RootName: dir}
			o := Options{Iface: "eth0"}
			before := map[string][]byte{}
			for _, p := range append(mapKeys(tc.changed), tc.kept...) {
				b, err := os.ReadFile(filepath.Join(dir, p))
				if err != nil {
					t.Fatal(err)
				}
				before[p] = b
			}
			fo := FixOptions{Classes: []FixClass{tc.class}, Journal: topology.JournalOptions{StateDir: state, Owner: "doctor-test"}}
			applied, err := Fix(context.Background(), h, o, fo)
			if err != nil {
				t.Fatal(err)
			}
			if len(applied) != len(tc.changed) {
				t.Errorf("applied %+v, want %d changes", applied, len(tc.changed))
			}
			for p, want := range tc.changed {
				if b, _ := os.ReadFile(filepath.Join(dir, p)); string(b) != want {
					t.Errorf("%s after the fix: %q, want %q", p, b, want)
				}
			}
			for _, p := range tc.kept {
				if b, _ := os.ReadFile(filepath.Join(dir, p)); !bytes.Equal(b, before[p]) {
					t.Errorf("%s changed: %q, was %q", p, b, before[p])
				}
			}
			settings, err := topology.JournaledSettings(state, "eth0")
			if err != nil || len(settings) != len(tc.changed) {
				t.Fatalf("journal holds %+v (%v), want %d settings", settings, err, len(tc.changed))
			}
			for _, s := range settings {
				if s.Kind != topology.KindFile || s.Class != string(tc.class) || s.Applied == "" || s.Original == s.Applied {
					t.Errorf("journaled %+v: want a file setting of class %s with its original and what was applied", s, tc.class)
				}
			}
			rep, err := Run(context.Background(), h, o)
			if err != nil {
				t.Fatal(err)
			}
			if c := rep.Find(tc.check); c.Status != Pass {
				t.Errorf("%s after the fix: %s %q", tc.check, c.Status, c.Evidence)
			}
			again, err := Fix(context.Background(), h, o, fo)
			if err != nil || len(again) != 0 {
				t.Errorf("a second fix applied %+v (%v), want nothing", again, err)
			}
			res, err := topology.Restore(context.Background(), r, topology.RestoreOptions{StateDir: state, Iface: "eth0", RootName: dir})
			if err != nil {
				t.Fatalf("restore: %v (%+v)", err, res)
			}
			for p, b := range before {
				if now, _ := os.ReadFile(filepath.Join(dir, p)); !bytes.Equal(now, b) {
					t.Errorf("%s after restore: %q, want the original %q", p, now, b)
				}
			}
			if left, _ := topology.JournaledSettings(state, "eth0"); len(left) != 0 {
				t.Errorf("the journal still holds %+v after restore", left)
			}
		})
	}
}

func mapKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
