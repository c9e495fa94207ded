package xsk

import (
	"fmt"
	"slices"
)

// virtualDrivers are drivers of devices that are not a NIC: software
// devices, and paravirtual ones whose transmit a hypervisor performs.
// virtio_net is here although it has a (virtio) bus address: its AF_XDP
// transmit under TCG is the hypervisor's work done inside the kick.
var virtualDrivers = []string{"veth", "virtio_net", "tun", "netkit", "xen-netfront", "dummy", "bridge", "macvlan", "ipvlan", "vxlan", "geneve"}

// Virtual reports whether the device with ethtool driver info driver
// and busInfo is virtual, and why: a driver of virtualDrivers, or no bus
// address (a software device). It is the need_wakeup policy's auto rule
// for the AF_XDP sender and receiver alike (on for a physical NIC, off
// for a virtual device). The driver info is read over the socket's
// network namespace, where /sys/class/net would show the namespace sysfs
// was mounted in, and virtio_net has a sysfs device (its virtio bus) as a
// NIC has.
func Virtual(driver, busInfo string) (bool, string) {
	switch {
	case slices.Contains(virtualDrivers, driver):
		return true, fmt.Sprintf("driver %s is a virtual device", driver)
	case busInfo == "":
		return true, fmt.Sprintf("driver %s has no bus address: a software device", driver)
	}
	return false, fmt.Sprintf("driver %s at %s is a physical NIC", driver, busInfo)
}
