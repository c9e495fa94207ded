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
				sameFileChecks(t, Host{Root: r, RootName: dir}, Host{Root: sr, RootName: snap}, Options{Iface: "eth0", Role: role, FrameSize: 64}, false)
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
	sameFileChecks(t, Host{Root: live, RootName: "/"}, Host{Root: sr, RootName: snap}, Options{Iface: iface, FrameSize: 64}, true)
}

// sameFileChecks runs the checks on a host and on its snapshot and fails
// on every file check or fact that differs. live compares only the SMT
// check's verdict: a live /proc/stat moves between the two reads.
func sameFileChecks(t *testing.T, host, snap Host, o Options, live bool) {
	t.Helper()
	want, err := Run(context.Background(), host, o)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Run(context.Background(), snap, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range fileCheckIDs {
		w, g := want.Find(id), got.Find(id)
		if live && id == "smt" {
			w, g = &Check{Status: w.Status}, &Check{Status: g.Status}
		}
		if d := cmp.Diff(w, g); d != "" {
			t.Errorf("%s of %s, role %s: the snapshot's check differs from the host's (-host +snapshot):\n%s", id, o.Iface, o.Role, d)
		}
	}
	if d := cmp.Diff(want.Facts, got.Facts); d != "" {
		t.Errorf("facts of %s differ (-host +snapshot):\n%s", o.Iface, d)
	}
}
