//go:build linux

package netns_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/linerate/linerate/internal/netns"
	"github.com/linerate/linerate/internal/netns/nstest"
)

func TestRefusesOtherRanges(t *testing.T) {
	nstest.SkipUnlessRoot(t)
	if _, err := netns.New("test-x"); err == nil {
		t.Error("a namespace not named lr-… was made")
	}
	a, err := netns.New("lr-range-check")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	_, _, err = netns.Veth(a, "lrx", a, "lry", netns.VethOptions{AddrA: netip.MustParsePrefix("10.0.0.1/24")})
	if err == nil || !strings.Contains(err.Error(), "198.18.0.0/15") {
		t.Errorf("10.0.0.1 accepted: %v", err)
	}
}
