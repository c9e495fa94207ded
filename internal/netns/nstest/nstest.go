//go:build linux

// Package nstest gives tests two network namespaces joined by a veth pair,
// removed when the test ends.
package nstest

import (
	"fmt"
	"net/netip"
	"os"
	"sync/atomic"
	"testing"

	"github.com/linerate/linerate/internal/netns"
)

// Pair is two namespaces, "a" (sender side) and "b", joined by veth A-B.
type Pair struct {
	A, B *netns.Link
}

var seq atomic.Int32

// SkipUnlessRoot skips tests that need CAP_NET_ADMIN to make namespaces.
func SkipUnlessRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates network namespaces and veth pairs")
	}
}

// NewPair makes the namespaces lr-t<pid>-<n>a and …b with veth "lra" (198.18.0.1/24)
// and "lrb" (198.18.0.2/24), IPv6 off, permanent neighbour entries both ways.
func NewPair(t testing.TB, queues int) *Pair {
	t.Helper()
	SkipUnlessRoot(t)
	n := seq.Add(1)
	mk := func(side string) *netns.NS {
		ns, err := netns.New(fmt.Sprintf("lr-t%d-%d%s", os.Getpid(), n, side))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := ns.Close(); err != nil {
				t.Error(err)
			}
		})
		return ns
	}
	a, b := mk("a"), mk("b")
	la, lb, err := netns.Veth(a, "lra", b, "lrb", netns.VethOptions{
		Queues: queues, AddrA: netip.MustParsePrefix("198.18.0.1/24"), AddrB: netip.MustParsePrefix("198.18.0.2/24"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := la.Neigh(lb.Addr.Addr(), lb.MAC); err != nil {
		t.Fatal(err)
	}
	if err := lb.Neigh(la.Addr.Addr(), la.MAC); err != nil {
		t.Fatal(err)
	}
	return &Pair{A: la, B: lb}
}
