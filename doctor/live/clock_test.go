package live

import (
	"os"
	"testing"

	"github.com/linerate/linerate/topology"
)

// The kernel's verdict: TIME_ERROR or STA_UNSYNC is unsynchronised.
func TestSynced(t *testing.T) {
	for _, tt := range []struct {
		state, status int32
		want          bool
	}{{0, 0x2001, true}, {0, 0x41, false}, {5, 0, false}, {1, 0x10, true}} {
		if got := Synced(tt.state, tt.status); got != tt.want {
			t.Errorf("state %d status %#x: %v, want %v", tt.state, tt.status, got, tt.want)
		}
	}
}

// The live host's clock reads (Linux: adjtimex with modes 0, which any
// user may call) and agrees with the kernel's verdict.
func TestReadClock(t *testing.T) {
	c, err := ReadClock()
	if err != nil {
		t.Skip(err)
	}
	if c.EstErrorUs < 0 || c.MaxErrorUs < 0 || c.Synchronised != Synced(c.State, c.Status) {
		t.Errorf("clock %+v", c)
	}
}

// The live host's root reads the clock; a snapshot's root does not (its
// clock is not the running kernel's).
func TestHostClock(t *testing.T) {
	root, err := topology.OpenRoot("/")
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	h := Host(root, "/", "lo")
	if h.Clock == nil || h.IfaceAddrs == nil || h.OpenNIC == nil || h.Root == nil || h.RootName != "/" {
		t.Errorf("live host %+v: want its root, clock, addresses and ethtool", h)
	}
	if os.Geteuid() == 0 && h.Firewall == nil {
		t.Error("live host as root: want its ruleset (nftables over netlink)")
	}
	if as, err := h.IfaceAddrs("lo"); err == nil && (len(as) == 0 || !as[0].IsLoopback()) {
		t.Errorf("addresses of lo: %v, want its loopback address first", as)
	}
	snap, err := topology.OpenRoot(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	if h := Host(snap, "snap", "lo"); h.Clock != nil || h.IfaceAddrs != nil || h.OpenNIC != nil || h.Firewall != nil {
		t.Error("a snapshot's host reads the running kernel's clock, addresses, ethtool or ruleset")
	}
}
