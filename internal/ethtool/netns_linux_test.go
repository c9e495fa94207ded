//go:build linux && traffic

package ethtool

import (
	"errors"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/linerate/linerate/internal/netns/nstest"
)

// openVeth opens a reader of a veth in its namespace, closed when the
// test ends.
func openVeth(t *testing.T) (*nstest.Pair, *Reader) {
	t.Helper()
	p := nstest.NewPair(t, 2)
	var r *Reader
	if err := p.A.NS.Do(func() (err error) { r, err = Open(p.A.Name); return err }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return p, r
}

// A reader opened in a veth's namespace reads the veth's driver and
// statistics later from any thread; veth's peer_ifindex is the peer's
// ifindex.
func TestVethStats(t *testing.T) {
	p, r := openVeth(t)
	if d, err := r.Driver(); err != nil || d != "veth" {
		t.Errorf("driver %q, %v; want veth", d, err)
	}
	if info, err := r.Info(); err != nil || info.Driver != "veth" {
		t.Errorf("driver info %+v, %v; want veth's", info, err)
	}
	for range 2 { // the second read uses the names kept from the first
		st, err := r.Stats()
		if err != nil {
			t.Fatal(err)
		}
		if st["peer_ifindex"] != uint64(p.B.Index) {
			t.Errorf("peer_ifindex %d, want %d (of %d statistics)", st["peer_ifindex"], p.B.Index, len(st))
		}
		if _, ok := st["rx_queue_1_xdp_packets"]; !ok {
			t.Errorf("no rx_queue_1_xdp_packets among %v", st)
		}
	}
}

// What veth offers on the host kernel (6.18): link settings (a fixed
// 10000 Mb/s, full duplex, no auto-negotiation, twisted pair) through
// both ETHTOOL_GLINKSETTINGS and the older ETHTOOL_GSET, and its
// features; no pause, coalescing or ring parameters, whose reads and
// writes fail with EOPNOTSUPP matching ErrNotSupported.
func TestVethParams(t *testing.T) {
	p, r := openVeth(t)

	want := Link{SpeedMbps: 10000, Duplex: "full", Autoneg: false, Port: "tp"}
	if l, err := r.Link(); err != nil || l != want {
		t.Errorf("link %+v, %v; want %+v", l, err, want)
	}
	if l, err := r.linkGSet(); err != nil || l != want {
		t.Errorf("link through ETHTOOL_GSET %+v, %v; want %+v", l, err, want)
	}

	unsupported := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrNotSupported) || !errors.Is(err, unix.EOPNOTSUPP) || !strings.Contains(err.Error(), p.A.Name) {
			t.Errorf("%s: %v, want EOPNOTSUPP matching ErrNotSupported, naming %s", what, err, p.A.Name)
		}
	}
	_, err := r.Pause()
	unsupported("pause", err)
	unsupported("set pause", r.SetPause(Pause{}))
	_, err = r.Coalesce()
	unsupported("coalesce", err)
	unsupported("set coalesce", r.SetCoalesce(Coalesce{}))
	_, err = r.Rings()
	unsupported("rings", err)
	unsupported("set rings", r.SetRings(Rings{}))

	fs, err := r.Features()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Feature{}
	for _, f := range fs {
		if _, dup := byName[f.Name]; dup {
			t.Errorf("feature %s listed twice", f.Name)
		}
		byName[f.Name] = f
	}
	for _, want := range []Feature{
		// veth can turn GRO on (it does with an XDP program) but starts with it off.
		{Name: "rx-gro", Available: true},
		{Name: "rx-lro", Fixed: true},
		{Name: "tx-generic-segmentation", Available: true, Requested: true, Active: true},
		{Name: "tx-tcp-segmentation", Available: true, Requested: true, Active: true},
		{Name: "rx-udp-gro-forwarding", Available: true},
	} {
		if got := byName[want.Name]; got != want {
			t.Errorf("feature %+v, want %+v (of %d features)", got, want, len(fs))
		}
	}
}
