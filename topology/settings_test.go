package topology

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// settingsRoot is a host root with one governor file and one RPS mask, as
// sysfs has them.
func settingsRoot(t *testing.T) *DirRoot {
	t.Helper()
	dir := t.TempDir()
	for name, content := range map[string]string{
		"sys/devices/system/cpu/cpu1/cpufreq/scaling_governor": "powersave\n",
		"sys/class/net/eth1/queues/rx-0/rps_cpus":              "0000000f\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// fakeRestorer is a SettingRestorer over a map, as an ethtool or nftables
// restorer is over the kernel.
type fakeRestorer struct {
	now     map[string]string
	restore error
}

func (f *fakeRestorer) Current(s Setting) (string, error) {
	v, ok := f.now[s.Key]
	if !ok {
		return "", os.ErrNotExist
	}
	return v, nil
}

func (f *fakeRestorer) Restore(s Setting) error {
	if f.restore != nil {
		return f.restore
	}
	f.now[s.Key] = s.Original
	return nil
}

const gov = "/sys/devices/system/cpu/cpu1/cpufreq/scaling_governor"
const rps = "/sys/class/net/eth1/queues/rx-0/rps_cpus"

// A setting is journaled before it is written, keeps its first original,
// and every restore puts it back byte for byte, with the journal's IRQs'
// restore; then the journal is gone and a second restore finds nothing.
func TestSettingJournaledAndRestored(t *testing.T) {
	r, state := settingsRoot(t), t.TempDir()
	o := JournalOptions{StateDir: state, Iface: "eth1", RootName: "/", Owner: "agent:a:eth1"}
	before, _ := r.ReadFile(gov)
	if err := JournalSetting(o, Setting{Kind: KindFile, Key: gov, Original: "powersave", Class: "governor"}); err != nil {
		t.Fatal(err)
	}
	j, err := LoadJournal(state, "eth1")
	if err != nil || j == nil || len(j.Settings) != 1 || j.Settings[0].Applied != "" || j.Owner != "agent:a:eth1" {
		t.Fatalf("journal before the write: %+v %v", j, err)
	}
	if err := r.WriteFile(gov, []byte("performance\n")); err != nil {
		t.Fatal(err)
	}
	if err := SettingApplied(o, KindFile, gov, "performance"); err != nil {
		t.Fatal(err)
	}
	// A second fix of the same setting keeps the first original.
	if err := JournalSetting(o, Setting{Kind: KindFile, Key: gov, Original: "performance"}); err != nil {
		t.Fatal(err)
	}
	fake := &fakeRestorer{now: map[string]string{"eth1": `{"rx":4096}`}}
	if err := JournalSetting(o, Setting{Kind: KindEthtoolRings, Key: "eth1", Original: `{"rx":256}`}); err != nil {
		t.Fatal(err)
	}
	if err := SettingApplied(o, KindEthtoolRings, "eth1", `{"rx":4096}`); err != nil {
		t.Fatal(err)
	}
	res, err := Restore(context.Background(), r, RestoreOptions{StateDir: state, RootName: "/", Owner: "agent:a:eth1",
		Settings: map[SettingKind]SettingRestorer{KindEthtoolRings: fake}})
	if err != nil {
		t.Fatal(err)
	}
	if after, _ := r.ReadFile(gov); string(after) != string(before) {
		t.Errorf("governor reads %q after restore, want %q", after, before)
	}
	if fake.now["eth1"] != `{"rx":256}` {
		t.Errorf("rings %s after restore, want the original", fake.now["eth1"])
	}
	if len(res) != 1 || len(res[0].Settings) != 2 || res[0].Settings[0].Status != StatusRestored || res[0].Settings[0].ReadBack != "powersave" {
		t.Errorf("restore result %+v", res)
	}
	if j, _ := LoadJournal(state, "eth1"); j != nil {
		t.Errorf("journal kept after a whole restore: %+v", j)
	}
	if res, err := Restore(context.Background(), r, RestoreOptions{StateDir: state}); err != nil || len(res) != 0 {
		t.Errorf("second restore: %+v %v", res, err)
	}
}

// A setting someone changed after the fix is left alone; one that reads
// the original is unchanged; a kind no restorer can put back keeps the
// journal, with an error naming the kind; another owner's journal is
// refused to a fix.
func TestSettingRestoreEdges(t *testing.T) {
	r, state := settingsRoot(t), t.TempDir()
	o := JournalOptions{StateDir: state, Iface: "eth1", RootName: "/", Owner: "doctor"}
	for _, s := range []Setting{
		{Kind: KindFile, Key: gov, Original: "schedutil", Applied: "x"},
		{Kind: KindFile, Key: rps, Original: "0000000f"},
		{Kind: KindNftTable, Key: "inet linerate"},
	} {
		if err := JournalSetting(o, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := SettingApplied(o, KindFile, gov, "performance"); err != nil { // and then an operator wrote powersave
		t.Fatal(err)
	}
	res, err := Restore(context.Background(), r, RestoreOptions{StateDir: state, RootName: "/"})
	if err == nil || !strings.Contains(err.Error(), "cannot restore nft-table settings") {
		t.Fatalf("restore without an nft restorer: %v", err)
	}
	if j, _ := LoadJournal(state, "eth1"); j == nil {
		t.Error("journal removed although a setting was not restored")
	}
	got := map[string]string{}
	for _, c := range res[0].Settings {
		got[c.Key] = c.Status
	}
	if got[gov] != StatusSkipped || got[rps] != StatusUnchanged {
		t.Errorf("statuses %v, want governor skipped (changed by someone else), rps unchanged", got)
	}
	if b, _ := r.ReadFile(gov); string(b) != "powersave\n" {
		t.Errorf("governor %q: a setting someone else changed was written", b)
	}
	err = JournalSetting(JournalOptions{StateDir: state, Iface: "eth1", Owner: "agent:b:eth1"}, Setting{Kind: KindFile, Key: rps, Original: "0"})
	if !errors.Is(err, ErrJournalOwner) {
		t.Errorf("another owner's journal: %v, want ErrJournalOwner", err)
	}
}
