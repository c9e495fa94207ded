//go:build linux && traffic

package doctor

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/linerate/linerate/internal/ethtool"
	"github.com/linerate/linerate/topology"
)

// Tests named TestGuest* run inside a throwaway qemu guest booted by
// cmd/linerate/internal/vmtest (TestVirtioNUMA in topology_test.go there), where they change
// a real virtio_net's parameters: LINERATE_VMTEST_GUEST=1 says so.

// nicParams is every parameter doctor reads, each as JSON (or the read's
// error), so that two readings compare byte for byte.
func nicParams(nic NIC) map[string]string {
	return map[string]string{"pause": param(nic.Pause), "coalesce": param(nic.Coalesce), "rings": param(nic.Rings),
		"features": param(nic.Features), "link": param(nic.Link), "info": param(nic.Info)}
}

func param[T any](read func() (T, error)) string {
	s, err := asJSON(read)
	if err != nil {
		return "error: " + err.Error()
	}
	return s
}

// TestGuestVirtioEthtool reads every ethtool parameter of the guest's
// virtio_net (Debian's 6.1 kernel under qemu), shrinks its rings to half
// their maximum (a host to fix), runs the checks, applies the
// flow-control, coalescing and rings fixes, makes a coalescing write the
// driver refuses through the same journal, restores with
// topology.Restore and doctor's restorers, and reads every parameter
// back exactly as it was before the fixes.
func TestGuestVirtioEthtool(t *testing.T) {
	if os.Getenv("LINERATE_VMTEST_GUEST") != "1" {
		t.Skip("runs only inside a vmtest guest (LINERATE_VMTEST_GUEST=1): it changes a real NIC's ethtool parameters")
	}
	iface := guestVirtioIface(t)
	ctx := context.Background()
	root, err := topology.OpenRoot("/")
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	h := Host{Root: root, RootName: "/", OpenNIC: func(i string) (NIC, error) { return ethtool.Open(i) }}
	nic, err := ethtool.Open(iface)
	if err != nil {
		t.Fatal(err)
	}
	defer nic.Close()

	boot := nicParams(nic)
	for _, k := range []string{"pause", "coalesce", "rings", "link", "info", "features"} {
		t.Logf("%s %s at boot: %s", iface, k, boot[k])
	}
	// virtio_net has no pause parameters.
	if _, err := nic.Pause(); !errors.Is(err, ethtool.ErrNotSupported) || !errors.Is(err, syscall.EOPNOTSUPP) {
		t.Errorf("pause: %v, want EOPNOTSUPP (ErrNotSupported)", err)
	}
	// Without VIRTIO_NET_F_NOTF_COAL (qemu does not offer it) the driver
	// interrupts on every frame: rx-frames 1, tx-frames 1 (NAPI tx), no
	// usecs, no adaptive. That is already "coalescing off".
	co, err := nic.Coalesce()
	if want := (ethtool.Coalesce{RXMaxFrames: 1, TXMaxFrames: 1}); err != nil || co != want {
		t.Errorf("coalescing %+v, %v; want %+v", co, err, want)
	}
	g, err := nic.Rings()
	if err != nil || g.RXMax == 0 || g.RX != g.RXMax || g.TX != g.TXMax {
		t.Fatalf("rings %+v, %v; want each at its maximum (the virtqueue's size) at boot", g, err)
	}
	if l, err := nic.Link(); err != nil || l.SpeedMbps != -1 || l.Duplex != "unknown" {
		t.Errorf("link %+v, %v; want an unknown speed and duplex (qemu was given none)", l, err)
	}

	// A host to fix: rings at half their maximum (virtio resizes a
	// virtqueue with VIRTIO_F_RING_RESET).
	half := g
	half.RX, half.TX = g.RXMax/2, g.TXMax/2
	if err := nic.SetRings(half); err != nil {
		t.Fatalf("shrink the rings to %s: %v", half, err)
	}
	before := nicParams(nic)
	t.Logf("rings before the fixes: %s", before["rings"])

	rep := rerun(t, h, iface)
	for _, want := range []struct {
		id     string
		status Status
		fix    string
	}{
		{"flow-control", Pass, ""},
		{"coalescing", Pass, ""},
		{"rings", Warn, "ethtool -G " + iface + " rx " + strconv.FormatUint(uint64(g.RXMax), 10) + " tx " + strconv.FormatUint(uint64(g.TXMax), 10)},
		{"offloads", Pass, ""},
		{"link", Warn, "ethtool -s " + iface + " speed <the host link's Mb/s> duplex full (virtio_net reports the speed it is given)"},
	} {
		c := rep.Find(want.id)
		t.Logf("check %s: %s %q fix %q", c.ID, c.Status, c.Evidence, c.Fix)
		if c.Status != want.status || c.Fix != want.fix {
			t.Errorf("check %s: %s fix %q, want %s fix %q", c.ID, c.Status, c.Fix, want.status, want.fix)
		}
	}
	t.Logf("facts %+v", rep.Facts)

	state := t.TempDir()
	jo := topology.JournalOptions{StateDir: state, Iface: iface, RootName: "/", Owner: "guest"}
	log := hclog.New(&hclog.LoggerOptions{Name: "guest", Output: t.Output(), Level: hclog.Info})
	applied, err := Fix(ctx, h, Options{Iface: iface, Role: RoleBoth}, FixOptions{Classes: []FixClass{FixFlowControl, FixCoalescing, FixRings}, Journal: jo, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) != 1 || applied[0].Class != FixRings || applied[0].From != before["rings"] {
		t.Fatalf("applied %+v: want the rings alone, from %s", applied, before["rings"])
	}
	if now, err := nic.Rings(); err != nil || now.RX != g.RXMax || now.TX != g.TXMax || jsonText(t, now) != applied[0].To {
		t.Errorf("rings after the fix %+v, %v; want rx %d tx %d, as journaled %s", now, err, g.RXMax, g.TXMax, applied[0].To)
	}
	if c := rerun(t, h, iface).Find("rings"); c.Status != Pass {
		t.Errorf("rings after the fix: %s %q", c.Status, c.Evidence)
	}

	// A coalescing write virtio refuses (rx-usecs needs notification
	// coalescing): reported with the errno, the original journaled first.
	e := &env{o: Options{Iface: iface}, ethtool: nic}
	j := &journaler{o: jo, log: log, class: FixCoalescing}
	err = fixParam(e, j, topology.KindEthtoolCoalesce, NIC.Coalesce, NIC.SetCoalesce, func(c ethtool.Coalesce) (ethtool.Coalesce, bool) {
		c.RXUsecs = 8
		return c, true
	})
	t.Logf("refused write: %v", err)
	if !errors.Is(err, ethtool.ErrNotSupported) || !errors.Is(err, syscall.EOPNOTSUPP) || !strings.Contains(err.Error(), "write ethtool-coalesce "+iface) {
		t.Errorf("refused coalescing write: %v, want EOPNOTSUPP naming the setting", err)
	}
	js, err := topology.JournaledSettings(state, iface)
	if err != nil || len(js) != 2 {
		t.Fatalf("journal %+v, %v; want the rings and the refused coalescing", js, err)
	}
	t.Logf("journal: %+v", js)

	res, err := topology.Restore(ctx, root, topology.RestoreOptions{StateDir: state, Iface: iface, RootName: "/", Owner: "guest", Settings: Restorers(h)})
	if err != nil {
		t.Fatalf("restore: %v", err)
	}
	for _, ch := range res[0].Settings {
		t.Logf("restored %s %s: %s, %s → %s (read back %s)", ch.Kind, ch.Key, ch.Status, ch.From, ch.To, ch.ReadBack)
		want := topology.StatusRestored
		if ch.Kind == topology.KindEthtoolCoalesce {
			want = topology.StatusUnchanged // the refused write changed nothing
		}
		if ch.Status != want {
			t.Errorf("restore of %s: %s, want %s", ch.Kind, ch.Status, want)
		}
	}
	after := nicParams(nic)
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s after the restore:\n%s\nwant, as before the fixes:\n%s", k, after[k], v)
		}
	}
	if js, err := topology.JournaledSettings(state, iface); err != nil || js != nil {
		t.Errorf("journal after the restore: %+v, %v; want none", js, err)
	}
	if err := nic.SetRings(g); err != nil {
		t.Errorf("put the boot's rings back: %v", err)
	}
}

// rerun makes the checks, for a host that sends and receives.
func rerun(t *testing.T, h Host, iface string) *Report {
	t.Helper()
	rep, err := Run(context.Background(), h, Options{Iface: iface, Role: RoleBoth})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// guestVirtioIface is the guest's one virtio_net interface, up.
func guestVirtioIface(t *testing.T) string {
	t.Helper()
	// /sys/class/net/IF/device/driver links to the driver: a glob cannot fail on this pattern.
	drivers, _ := filepath.Glob("/sys/class/net/*/device/driver")
	var found []string
	for _, d := range drivers {
		if l, err := os.Readlink(d); err == nil && filepath.Base(l) == "virtio_net" {
			found = append(found, filepath.Base(filepath.Dir(filepath.Dir(d))))
		}
	}
	if len(found) != 1 {
		t.Fatalf("want exactly one virtio_net interface, found %v", found)
	}
	if out, err := exec.Command("ip", "link", "set", found[0], "up").CombinedOutput(); err != nil {
		t.Fatalf("ip link set %s up: %v: %s", found[0], err, out)
	}
	return found[0]
}
