//go:build linux && traffic

package ethtool

import (
	"testing"

	"github.com/linerate/linerate/internal/netns/nstest"
)

// A reader opened in a veth's namespace reads the veth's driver and
// statistics later from any thread; veth's peer_ifindex is the peer's
// ifindex.
func TestVethStats(t *testing.T) {
	p := nstest.NewPair(t, 2)
	var r *Reader
	if err := p.A.NS.Do(func() (err error) { r, err = Open(p.A.Name); return err }); err != nil {
		t.Fatal(err)
	}
	defer r.Close()
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
