//go:build linux && traffic

package doctor

import (
	"context"
	"io/fs"
	"strings"
	"syscall"
	"testing"

	"github.com/linerate/linerate/internal/ethtool"
	"github.com/linerate/linerate/internal/netns"
	"github.com/linerate/linerate/internal/netns/nstest"
	"github.com/linerate/linerate/topology"
)

// nsRoot is the host's root with the /sys of a network namespace: a
// sysfs shows the interfaces of the namespace that mounted it.
type nsRoot struct{ sys, host *topology.DirRoot }

func (r nsRoot) pick(name string) (topology.Root, string) {
	if name == "/sys" || strings.HasPrefix(name, "/sys/") {
		return r.sys, "/" + strings.TrimPrefix(strings.TrimPrefix(name, "/sys"), "/")
	}
	return r.host, name
}

func (r nsRoot) ReadFile(n string) ([]byte, error)       { x, n := r.pick(n); return x.ReadFile(n) }
func (r nsRoot) ReadDir(n string) ([]fs.DirEntry, error) { x, n := r.pick(n); return x.ReadDir(n) }
func (r nsRoot) Lstat(n string) (fs.FileInfo, error)     { x, n := r.pick(n); return x.Lstat(n) }
func (r nsRoot) Stat(n string) (fs.FileInfo, error)      { x, n := r.pick(n); return x.Stat(n) }
func (r nsRoot) Readlink(n string) (string, error)       { x, n := r.pick(n); return x.Readlink(n) }
func (r nsRoot) WriteFile(n string, b []byte) error      { x, n := r.pick(n); return x.WriteFile(n, b) }

// nsHost is the live host seen from inside ns: its sysfs (mounted in a
// temporary directory from inside the namespace) and its ethtool (a
// reader opened there).
func nsHost(t *testing.T, ns *netns.NS) Host {
	t.Helper()
	dir := t.TempDir()
	if err := ns.Do(func() error { return syscall.Mount("sysfs", dir, "sysfs", syscall.MS_RDONLY, "") }); err != nil {
		t.Fatalf("mount the namespace's sysfs on %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	sys, err := topology.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	host, err := topology.OpenRoot("/")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sys.Close(); host.Close() })
	return Host{Root: nsRoot{sys: sys, host: host}, RootName: "/", OpenNIC: func(iface string) (NIC, error) {
		var r *ethtool.Reader
		err := ns.Do(func() (err error) { r, err = ethtool.Open(iface); return err })
		return r, err
	}}
}

// The ethtool checks on a real veth (host kernel 6.18): veth has no
// pause, coalescing or ring parameters (EOPNOTSUPP), which are PASSes
// saying so, and --fix of their classes changes and journals nothing;
// its link is a nominal 10000 Mb/s full duplex, a PASS as a virtual
// interface; its offloads are read by name, GRO off.
func TestVethEthtoolChecks(t *testing.T) {
	p := nstest.NewPair(t, 2)
	h := nsHost(t, p.A.NS)
	rep, err := Run(context.Background(), h, Options{Iface: p.A.Name, Role: RoleBoth})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct {
		id       string
		evidence []string
	}{
		{"flow-control", []string{"ethtool -a lra (ETHTOOL_GPAUSEPARAM): the driver does not expose it (ethtool pause parameters of lra: operation not supported)"}},
		{"coalescing", []string{"ethtool -c lra (ETHTOOL_GCOALESCE): the driver does not expose it (ethtool coalescing of lra: operation not supported)"}},
		{"rings", []string{"ethtool -g lra (ETHTOOL_GRINGPARAM): the driver does not expose it (ethtool rings of lra: operation not supported)"}},
		{"offloads", []string{"ethtool -k lra (ETHTOOL_GFEATURES): rx-gro off, rx-lro off [fixed], rx-gro-hw off [fixed], rx-udp-gro-forwarding off, rx-gro-list off, tx-tcp-segmentation on, tx-generic-segmentation on"}},
		{"link", []string{"ethtool lra (ETHTOOL_GLINKSETTINGS): 10000Mb/s full duplex autoneg off port tp", "lra has no device (/sys/class/net/lra/device): a virtual interface, whose speed is nominal; its rate is the CPU's"}},
	} {
		c := rep.Find(want.id)
		if c == nil {
			t.Fatalf("no %s check", want.id)
		}
		t.Logf("%s: %s %q", c.ID, c.Status, c.Evidence)
		if c.Status != Pass || strings.Join(c.Evidence, "\n") != strings.Join(want.evidence, "\n") {
			t.Errorf("%s: %s %q, want PASS %q", c.ID, c.Status, c.Evidence, want.evidence)
		}
	}
	f := rep.Facts
	if f.Rings != "unsupported" || f.Coalesce != "unsupported" || f.Pause != "unsupported" || f.Firmware != "veth" ||
		f.Offloads != "gro off lro off rx-gro-hw off rx-udp-gro-forwarding off rx-gro-list off tso on gso on" {
		t.Errorf("facts %+v", f)
	}

	state := t.TempDir()
	applied, err := Fix(context.Background(), h, Options{Iface: p.A.Name, Role: RoleBoth},
		FixOptions{Classes: []FixClass{FixFlowControl, FixCoalescing, FixRings}, Journal: topology.JournalOptions{StateDir: state}})
	if err != nil || len(applied) != 0 {
		t.Errorf("fix on veth: %+v, %v; want nothing changed", applied, err)
	}
	if js, err := topology.JournaledSettings(state, p.A.Name); err != nil || js != nil {
		t.Errorf("journal after a fix with nothing to change: %+v, %v", js, err)
	}
}
