package doctor

import (
	"bytes"
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/linerate/linerate/topology"
)

// fileCheckIDs are the checks that read only files.
var fileCheckIDs = []string{"irqbalance", "steering", "governor", "idle", "smt", "numa", "mtu", "conntrack", "kernel", "clock"}

// snapshotOf records iface below r as `linerate irq snapshot` does
// (topology.RecordIface), unpacks the snapshot and opens it as a root.
func snapshotOf(t *testing.T, r topology.Root, iface string) (*topology.DirRoot, string) {
	t.Helper()
	rec, err := topology.RecordIface(r, iface)
	if err != nil {
		t.Fatalf("record %s: %v", iface, err)
	}
	var tgz bytes.Buffer
	if err := rec.WriteTarGz(&tgz); err != nil {
		t.Fatal(err)
	}
	snap := t.TempDir()
	if err := topology.ExtractTarGz(&tgz, snap); err != nil {
		t.Fatal(err)
	}
	return openRoot(t, snap), snap
}

// TestSnapshotCarriesFileChecks records each fixture as `linerate irq
// snapshot` does (topology.RecordIface) and runs the checks on the
// snapshot: every file check must say exactly what it says on the
// fixture, so a --root snapshot carries every file they read.
func TestSnapshotCarriesFileChecks(t *testing.T) {
	for _, trees := range [][]string{
		{host}, {host, edit("irqbalance-banned")}, {host, edit("irqbalance-policy")}, {host, edit("rps")}, {host, edit("rfs")},
		{host, edit("cpufreq-powersave")}, {host, edit("cpuidle")}, {host, edit("smt")}, {host, edit("chronyd")},
		{vmDebian}, {vmDebian, edit("vm-xps")},
	} {
		t.Run(trees[len(trees)-1], func(t *testing.T) {
			r, dir := fixtureRoot(t, trees...)
			sr, snap := snapshotOf(t, r, "eth0")
			for _, role := range Roles {
				o := Options{Iface: "eth0", Role: role, FrameSize: 64}
				want, err := Run(context.Background(), Host{Root: r, RootName: dir}, o)
				if err != nil {
					t.Fatal(err)
				}
				got, err := Run(context.Background(), Host{Root: sr, RootName: snap}, o)
				if err != nil {
					t.Fatal(err)
				}
				for _, id := range fileCheckIDs {
					if d := cmp.Diff(want.Find(id), got.Find(id)); d != "" {
						t.Errorf("%s, role %s: the snapshot's check differs from the fixture's (-fixture +snapshot):\n%s", id, role, d)
					}
				}
				if d := cmp.Diff(want.Facts, got.Facts); d != "" {
					t.Errorf("facts differ (-fixture +snapshot):\n%s", d)
				}
			}
		})
	}
}

// TestSnapshotOfThisHost records this host's first interface with a device
// as `linerate irq snapshot` does and runs the checks on the snapshot and
// on the live root: every file check must say the same.
func TestSnapshotOfThisHost(t *testing.T) {
	live, err := topology.OpenRoot("/")
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	ents, _ := live.ReadDir("/sys/class/net")
	iface := ""
	for _, e := range ents {
		if _, err := live.Stat("/sys/class/net/" + e.Name() + "/device"); err == nil {
			iface = e.Name()
			break
		}
	}
	if iface == "" {
		t.Skip("this host has no interface with a device")
	}
	if _, err := topology.Inspect(live, iface); err != nil {
		t.Skipf("this host's %s cannot be inspected: %v", iface, err)
	}
	sr, snap := snapshotOf(t, live, iface)
	o := Options{Iface: iface, FrameSize: 64}
	want, err := Run(context.Background(), Host{Root: live, RootName: "/"}, o)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Run(context.Background(), Host{Root: sr, RootName: snap}, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range fileCheckIDs {
		w, g := want.Find(id), got.Find(id)
		if id == "smt" {
			// /proc/stat moves between the two reads: compare verdicts.
			w, g = &Check{Status: w.Status}, &Check{Status: g.Status}
		}
		if d := cmp.Diff(w, g); d != "" {
			t.Errorf("%s of %s: the snapshot's check differs from the live host's (-live +snapshot):\n%s", id, iface, d)
		}
	}
}
