package agent

import (
	"net"
	"net/netip"
	"slices"
	"testing"

	"github.com/linerate/linerate/topology"
)

// The host's interface reading lists the loopback's addresses and MTU as
// net does, the default source for a loopback destination is among
// them, and a missing interface is an error.
func TestHostIface(t *testing.T) {
	ifs, err := net.Interfaces()
	if err != nil {
		t.Skipf("no interfaces: %v", err)
	}
	i := slices.IndexFunc(ifs, func(i net.Interface) bool { return i.Flags&net.FlagLoopback != 0 })
	if i < 0 {
		t.Skip("no loopback interface")
	}
	lo := ifs[i].Name
	got, err := hostNetOS{}.iface(lo)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(got.addrs, netip.Addr.IsLoopback) || got.mtu != ifs[i].MTU {
		t.Errorf("%s: addresses %v MTU %d, want a loopback address and MTU %d", lo, got.addrs, got.mtu, ifs[i].MTU)
	}
	if src, ok := topology.SourceAddr(got.addrs, netip.MustParseAddr("127.0.0.2")); !ok || !src.IsLoopback() {
		t.Errorf("source for 127.0.0.2 on %s: %v %v", lo, src, ok)
	}
	if _, err := (hostNetOS{}).iface("nosuch0"); err == nil {
		t.Error("missing interface: no error")
	}
}
