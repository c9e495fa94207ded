package topology

import (
	"net"
	"net/netip"
	"slices"
	"testing"
)

// InterfaceAddrs lists the loopback's addresses as net does, and a
// missing interface is an error naming it.
func TestInterfaceAddrs(t *testing.T) {
	ifs, err := net.Interfaces()
	if err != nil {
		t.Skipf("no interfaces: %v", err)
	}
	i := slices.IndexFunc(ifs, func(i net.Interface) bool { return i.Flags&net.FlagLoopback != 0 })
	if i < 0 {
		t.Skip("no loopback interface")
	}
	lo := ifs[i].Name
	got, err := InterfaceAddrs(lo)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(got, netip.Addr.IsLoopback) {
		t.Errorf("%s: %v, want a loopback address", lo, got)
	}
	if src, ok := SourceAddr(got, netip.MustParseAddr("127.0.0.2")); !ok || !src.IsLoopback() {
		t.Errorf("source for 127.0.0.2 on %s: %v %v", lo, src, ok)
	}
	if _, err := InterfaceAddrs("nosuch0"); err == nil {
		t.Error("missing interface: no error")
	}
}
