//go:build linux && traffic

package doctor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/linerate/linerate/internal/netns/nstest"
	"github.com/linerate/linerate/topology"
	"github.com/linerate/linerate/topology/cpuset"
)

// namespaceRoot mounts a sysfs made inside ns's network namespace at
// <dir>/sys and returns dir as a host root. sysfs shows the network
// devices of the namespace that mounted it (the kernel tags the mount with
// the mounting task's network namespace), so the host's /sys never shows
// a namespace's veth; `ip netns exec` mounts one for the same reason. The
// mount is made by a thread inside the namespace but in this process's
// mount namespace, so every thread reads it; it is detached when the
// test ends.
func namespaceRoot(t *testing.T, do func(func() error) error) (*topology.DirRoot, string) {
	t.Helper()
	dir := t.TempDir()
	sys := filepath.Join(dir, "sys")
	if err := os.Mkdir(sys, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := do(func() error {
		return syscall.Mount("sysfs", sys, "sysfs", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, "")
	}); err != nil {
		t.Fatalf("mount the namespace's sysfs on %s: %v", sys, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(sys, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", sys, err)
		}
	})
	return openRoot(t, dir), dir
}

// TestLiveRPSFixVeth turns RPS on for both rx queues of a real veth in a
// network namespace, checks that doctor flags it, applies --fix rps
// (journaled), checks that the kernel now reads RPS off, and restores
// from the journal: each rps_cpus file reads back byte for byte what it
// read before the fix.
func TestLiveRPSFixVeth(t *testing.T) {
	p := nstest.NewPair(t, 2)
	r, dir := namespaceRoot(t, p.B.NS.Do)
	iface := p.B.Name
	if _, err := r.Stat("/sys/class/net/" + iface); err != nil {
		t.Fatalf("the namespace's sysfs does not show %s: %v", iface, err)
	}
	if _, err := os.Stat("/sys/class/net/" + iface); err == nil {
		t.Logf("note: the host's /sys shows an interface named %s too", iface)
	}
	online, err := topology.OnlineCPUs(r)
	if err != nil {
		t.Fatal(err)
	}
	if online.Len() < 2 {
		// RPS to the run's only CPU does not fight the pinning: the check
		// passes it and the fix leaves it.
		t.Skip("needs two online CPUs, to steer RPS off the run's CPU")
	}
	on := online.Mask(online.Max() + 1)
	queues := []string{"rx-0", "rx-1"}
	for _, q := range queues {
		if err := r.WriteFile(fmt.Sprintf("/sys/class/net/%s/queues/%s/rps_cpus", iface, q), []byte(on+"\n")); err != nil {
			t.Fatalf("turn RPS on for %s %s: %v", iface, q, err)
		}
	}
	t.Cleanup(func() {
		for _, q := range queues {
			_ = r.WriteFile(fmt.Sprintf("/sys/class/net/%s/queues/%s/rps_cpus", iface, q), []byte("0\n"))
		}
	})
	before := map[string][]byte{}
	for _, q := range queues {
		name := fmt.Sprintf("/sys/class/net/%s/queues/%s/rps_cpus", iface, q)
		b, err := r.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		before[name] = b
	}
	h := Host{Root: r, RootName: dir}
	o := Options{Iface: iface, Role: RoleReceiver, CPUs: []int{0}}
	steering := func() *Check {
		rep, err := Run(context.Background(), h, o)
		if err != nil {
			t.Fatal(err)
		}
		return rep.Find("steering")
	}
	if c := steering(); c.Status != Warn || c.FixClass != FixRPS {
		t.Fatalf("steering with RPS on %s: %s %q, want WARN with fix class rps", on, c.Status, c.Evidence)
	}
	state := t.TempDir()
	applied, err := Fix(context.Background(), h, o, FixOptions{Classes: []FixClass{FixRPS}, Journal: topology.JournalOptions{StateDir: state, Owner: "doctor-test"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) != len(queues) {
		t.Fatalf("applied %+v, want one change per rx queue", applied)
	}
	for name := range before {
		b, _ := r.ReadFile(name)
		if m, err := cpuset.ParseMask(string(b)); err != nil || !m.IsEmpty() {
			t.Errorf("%s after the fix: %q, want all zero", name, b)
		}
	}
	if c := steering(); c.Status != Pass {
		t.Errorf("steering after the fix: %s %q", c.Status, c.Evidence)
	}
	res, err := topology.Restore(context.Background(), r, topology.RestoreOptions{StateDir: state, Iface: iface, RootName: dir})
	if err != nil {
		t.Fatalf("restore: %v (%+v)", err, res)
	}
	for name, b := range before {
		now, _ := r.ReadFile(name)
		if string(now) != string(b) {
			t.Errorf("%s after restore: %q, want %q", name, now, b)
		}
	}
	t.Logf("rps_cpus of %s: %q before the fix, restored to %q", iface, before, on)
}
