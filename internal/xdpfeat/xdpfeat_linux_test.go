//go:build linux

package xdpfeat

import (
	"errors"
	"net"
	"syscall"
	"testing"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// The netdev family's id is the one the controller gives the netlink
// package too, a family that does not exist is ENOENT, and the loopback
// interface's XDP features are read (none of the live-frame transmit
// bit: lo cannot ndo_xdp_xmit).
func TestXDPFeaturesRawNetlink(t *testing.T) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_GENERIC)
	if err != nil {
		t.Skipf("no generic netlink here: %v", err)
	}
	defer unix.Close(fd)
	want, err := netlink.GenlFamilyGet("netdev")
	if err != nil {
		t.Skipf("the kernel has no netdev family (before 6.3): %v", err)
	}
	if got, err := genlFamily(fd, "netdev"); err != nil || got != want.ID {
		t.Errorf("netdev family id %d %v, want %d", got, err, want.ID)
	}
	if _, err := genlFamily(fd, "no-such-family"); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("an unknown family: %v, want ENOENT", err)
	}
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Fatal(err)
	}
	feat, err := Read(lo.Index)
	if err != nil {
		t.Fatalf("xdp features of lo: %v", err)
	}
	if feat&NdoXmit != 0 {
		t.Errorf("lo's xdp features %#x say it can ndo_xdp_xmit", feat)
	}
}
