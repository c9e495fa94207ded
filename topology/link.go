package topology

import (
	"fmt"
	"strconv"
	"strings"
)

// MTU is the interface's MTU from /sys/class/net/<iface>/mtu.
func MTU(r Root, iface string) (int, error) {
	n, err := readInt(r, "/sys/class/net/"+iface+"/mtu")
	if err != nil {
		return 0, fmt.Errorf("read the MTU of %s: %w", iface, err)
	}
	if n <= 0 {
		return 0, fmt.Errorf("read the MTU of %s: %d is not an MTU", iface, n)
	}
	return n, nil
}

// LinkSpeedMbps is the interface's link speed from sysfs (0 when the
// driver reports none, or -1 "unknown", as virtual devices do).
func LinkSpeedMbps(r Root, iface string) int64 {
	s, err := readString(r, "/sys/class/net/"+iface+"/speed")
	if err != nil {
		return 0
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0
	}
	return v
}

// PCIModel is the interface's PCI "vendor:device" ("8086:1592"), "" for
// a device without them (veth, loopback).
func PCIModel(r Root, iface string) string {
	var ids []string
	for _, f := range []string{"vendor", "device"} {
		s, err := readString(r, "/sys/class/net/"+iface+"/device/"+f)
		if err != nil {
			return ""
		}
		ids = append(ids, strings.TrimPrefix(s, "0x"))
	}
	return strings.Join(ids, ":")
}
