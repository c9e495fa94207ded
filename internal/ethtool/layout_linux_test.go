//go:build linux

package ethtool

import (
	"testing"
	"unsafe"
)

// The ioctl structs have the kernel's sizes and offsets
// (include/uapi/linux/ethtool.h on x86-64 and arm64): a field out of
// place shifts every one after it.
func TestLayouts(t *testing.T) {
	got := map[string]uintptr{
		"sizeof(struct ethtool_pauseparam)":                       unsafe.Sizeof(pauseParam{}),
		"sizeof(struct ethtool_coalesce)":                         unsafe.Sizeof(coalesceParam{}),
		"sizeof(struct ethtool_ringparam)":                        unsafe.Sizeof(ringParam{}),
		"sizeof(struct ethtool_link_settings)":                    unsafe.Sizeof(linkSettings{}),
		"sizeof(struct ethtool_cmd)":                              unsafe.Sizeof(ethtoolCmd{}),
		"sizeof(struct ethtool_sset_info), one count":             unsafe.Sizeof(ssetInfo{}),
		"offsetof(ethtool_link_settings, link_mode_masks_nwords)": unsafe.Offsetof(linkSettings{}.nwords),
		"offsetof(ethtool_cmd, speed_hi)":                         unsafe.Offsetof(ethtoolCmd{}.speedHi),
		"offsetof(ethtool_cmd, autoneg)":                          unsafe.Offsetof(ethtoolCmd{}.autoneg),
		"offsetof(ethtool_sset_info, data)":                       unsafe.Offsetof(ssetInfo{}.data),
	}
	kernel := map[string]uintptr{
		"sizeof(struct ethtool_pauseparam)": 16, "sizeof(struct ethtool_coalesce)": 92, "sizeof(struct ethtool_ringparam)": 36,
		"sizeof(struct ethtool_link_settings)": 48, "sizeof(struct ethtool_cmd)": 44, "sizeof(struct ethtool_sset_info), one count": 24,
		"offsetof(ethtool_link_settings, link_mode_masks_nwords)": 15, "offsetof(ethtool_cmd, speed_hi)": 28,
		"offsetof(ethtool_cmd, autoneg)": 18, "offsetof(ethtool_sset_info, data)": 16,
	}
	for name, n := range kernel {
		if got[name] != n {
			t.Errorf("%s: %d bytes here, the kernel's is %d", name, got[name], n)
		}
	}
}
