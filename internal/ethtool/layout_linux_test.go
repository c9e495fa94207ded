//go:build linux

package ethtool

import (
	"testing"
	"unsafe"
)

// The ioctl structs have the kernel's sizes (include/uapi/linux/ethtool.h
// on x86-64 and arm64): a field out of place shifts every one after it.
func TestLayouts(t *testing.T) {
	for _, tc := range []struct {
		name      string
		got, want uintptr
	}{
		{"struct ethtool_pauseparam", unsafe.Sizeof(pauseParam{}), 16},
		{"struct ethtool_coalesce", unsafe.Sizeof(coalesceParam{}), 92},
		{"struct ethtool_ringparam", unsafe.Sizeof(ringParam{}), 36},
		{"struct ethtool_link_settings", unsafe.Sizeof(linkSettings{}), 48},
		{"struct ethtool_cmd", unsafe.Sizeof(ethtoolCmd{}), 44},
		{"struct ethtool_sset_info with one count", unsafe.Sizeof(ssetInfo{}), 24},
		{"ethtool_link_settings.link_mode_masks_nwords", unsafe.Offsetof(linkSettings{}.nwords), 15},
		{"ethtool_cmd.speed_hi", unsafe.Offsetof(ethtoolCmd{}.speedHi), 28},
		{"ethtool_cmd.autoneg", unsafe.Offsetof(ethtoolCmd{}.autoneg), 18},
		{"ethtool_sset_info.data", unsafe.Offsetof(ssetInfo{}.data), 16},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %d bytes, the kernel's is %d", tc.name, tc.got, tc.want)
		}
	}
}
