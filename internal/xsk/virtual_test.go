package xsk

import (
	"strings"
	"testing"
)

// TestVirtual: the drivers of software and paravirtual devices, and a
// device without a bus address, are virtual; a NIC on PCI is not.
func TestVirtual(t *testing.T) {
	for _, tc := range []struct {
		driver, bus string
		virtual     bool
		why         string
	}{
		{"veth", "", true, "driver veth is a virtual device"},
		{"virtio_net", "0000:00:03.0", true, "driver virtio_net is a virtual device"},
		{"tun", "tap", true, "driver tun is a virtual device"},
		{"mystery", "", true, "no bus address"},
		{"ice", "0000:3b:00.0", false, "driver ice at 0000:3b:00.0 is a physical NIC"},
		{"mlx5_core", "0000:5e:00.1", false, "physical NIC"},
	} {
		v, why := Virtual(tc.driver, tc.bus)
		if v != tc.virtual || !strings.Contains(why, tc.why) {
			t.Errorf("Virtual(%q, %q) = %v, %q; want %v saying %q", tc.driver, tc.bus, v, why, tc.virtual, tc.why)
		}
	}
}
