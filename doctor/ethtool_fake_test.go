package doctor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/linerate/linerate/internal/ethtool"
	"github.com/linerate/linerate/topology"
)

// fakeNIC is a driver's ethtool parameters in memory. A parameter whose
// read fails refuses its write too; a coalescing write with rx-usecs 0
// (the fix's) is refused with setCoalErr, after it changed adaptive rx
// when partial is set (a driver that applied half of it).
type fakeNIC struct {
	pause                       ethtool.Pause
	coalesce                    ethtool.Coalesce
	rings                       ethtool.Rings
	features                    []ethtool.Feature
	link                        ethtool.Link
	info                        ethtool.DriverInfo
	pauseErr, coalErr, ringsErr error
	featErr, linkErr, infoErr   error
	setCoalErr                  error
	partial                     bool
	writes                      int
	closed                      int
}

// set counts and applies a write unless the parameter cannot be read.
func (f *fakeNIC) set(readErr error, apply func()) error {
	if readErr != nil {
		return readErr
	}
	f.writes++
	apply()
	return nil
}

func (f *fakeNIC) Pause() (ethtool.Pause, error) { return f.pause, f.pauseErr }
func (f *fakeNIC) SetPause(p ethtool.Pause) error {
	return f.set(f.pauseErr, func() { f.pause = p })
}
func (f *fakeNIC) Coalesce() (ethtool.Coalesce, error) { return f.coalesce, f.coalErr }
func (f *fakeNIC) SetCoalesce(c ethtool.Coalesce) error {
	if f.setCoalErr != nil && c.RXUsecs == 0 {
		if f.partial {
			f.coalesce.UseAdaptiveRX = c.UseAdaptiveRX
		}
		return f.setCoalErr
	}
	return f.set(f.coalErr, func() { f.coalesce = c })
}
func (f *fakeNIC) Rings() (ethtool.Rings, error) { return f.rings, f.ringsErr }

// SetRings takes the sizes, not the maximums (the driver's), and refuses
// a size above its maximum as the kernel does.
func (f *fakeNIC) SetRings(g ethtool.Rings) error {
	if g.RX > f.rings.RXMax || g.TX > f.rings.TXMax {
		return fmt.Errorf("set rings %s: invalid argument", g)
	}
	return f.set(f.ringsErr, func() { f.rings.RX, f.rings.RXMini, f.rings.RXJumbo, f.rings.TX = g.RX, g.RXMini, g.RXJumbo, g.TX })
}
func (f *fakeNIC) Features() ([]ethtool.Feature, error) { return f.features, f.featErr }
func (f *fakeNIC) Link() (ethtool.Link, error)          { return f.link, f.linkErr }
func (f *fakeNIC) Info() (ethtool.DriverInfo, error)    { return f.info, f.infoErr }
func (f *fakeNIC) Close() error                         { f.closed++; return nil }

// errNotExposed is what internal/ethtool returns for EOPNOTSUPP.
var errNotExposed = fmt.Errorf("ethtool pause parameters of eth1: operation not supported: %w", ethtool.ErrNotSupported)

// mlx5Coalesce is ConnectX-5's default coalescing: adaptive on.
var mlx5Coalesce = ethtool.Coalesce{UseAdaptiveRX: true, UseAdaptiveTX: true, RXUsecs: 8, RXMaxFrames: 128, TXUsecs: 16, TXMaxFrames: 32}

// testHost is a fixture root holding the interface eth1 (no device: a
// virtual interface for topology) whose ethtool is nic.
func testHost(t *testing.T, nic NIC) Host {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"sys/class/net/eth1", "proc/sys/kernel"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "proc/sys/kernel/osrelease"), []byte("6.18.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := topology.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return Host{Root: r, RootName: dir, OpenNIC: func(iface string) (NIC, error) {
		if iface != "eth1" {
			return nil, fmt.Errorf("ethtool of %s: %w", iface, ethtool.ErrNoInterface)
		}
		return nic, nil
	}}
}

// testEnv is an env of eth1 with nic, for the role; physical gives it a
// device of that driver.
func testEnv(t *testing.T, nic NIC, role Role, physical string) *env {
	t.Helper()
	e := &env{o: Options{Iface: "eth1", Role: role}, ethtool: nic}
	if nic == nil {
		e.ethErr = errors.New("ethtool cannot be read on this host root (a snapshot or fixture)")
	}
	if physical != "" {
		e.nic = &topology.NIC{Iface: "eth1", Driver: physical}
	} else {
		e.nicErr = fmt.Errorf("eth1: %w", topology.ErrNoDevice)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sys/class/net/eth1"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]string{"speed": "-1", "operstate": "down"} {
		if err := os.WriteFile(filepath.Join(dir, "sys/class/net/eth1", name), []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := topology.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	e.h = Host{Root: r, RootName: dir}
	return e
}
