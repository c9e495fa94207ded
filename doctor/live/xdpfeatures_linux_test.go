//go:build linux

package live

import (
	"slices"
	"testing"
)

// The running kernel's netdev family answers for lo (no driver XDP:
// none of the driver bits, or the family is absent on a kernel before
// 6.3, which is said); a name the namespace lacks is an error naming it.
func TestXDPFeatures(t *testing.T) {
	f, err := xdpFeatures("lo")
	if err != nil {
		t.Skipf("no netdev family here: %v", err)
	}
	if slices.Contains(f, "ndo-xmit") || slices.Contains(f, "xsk-zerocopy") {
		t.Errorf("lo's xdp-features %v: lo has no driver XDP", f)
	}
	if _, err := xdpFeatures("nosuchif0"); err == nil {
		t.Error("xdp-features of a missing interface: no error")
	}
}
