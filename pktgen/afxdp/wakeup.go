package afxdp

import (
	"fmt"
	"slices"

	"github.com/linerate/linerate/pktgen"
)

// virtualDrivers are drivers of devices that are not a NIC: software
// devices, and paravirtual ones whose transmit a hypervisor performs.
// virtio_net is here although it has a (virtio) bus address: its AF_XDP
// transmit under TCG is the hypervisor's work done inside the kick.
var virtualDrivers = []string{"veth", "virtio_net", "tun", "netkit", "xen-netfront", "dummy", "bridge", "macvlan", "ipvlan", "vxlan", "geneve"}

// Virtual reports whether the device with ethtool driver info driver
// and busInfo is virtual, and why: a driver of virtualDrivers, or no bus
// address (a software device). The driver info is read over the
// socket's network namespace, where /sys/class/net would show the
// namespace sysfs was mounted in, and virtio_net has a sysfs device
// (its virtio bus) as a NIC has.
func Virtual(driver, busInfo string) (bool, string) {
	switch {
	case slices.Contains(virtualDrivers, driver):
		return true, fmt.Sprintf("driver %s is a virtual device", driver)
	case busInfo == "":
		return true, fmt.Sprintf("driver %s has no bus address: a software device", driver)
	}
	return false, fmt.Sprintf("driver %s at %s is a physical NIC", driver, busInfo)
}

// Wakeup is the need_wakeup choice for policy on a device, and why. On
// a physical NIC in zero-copy mode the driver's NAPI sends the TX ring
// by itself and need_wakeup spares a syscall per batch; on a virtual
// device transmit is synchronous inside the kick (sendto), so every
// batch needs the syscall anyway and the flag only adds a check.
// virtual and why are Virtual's answer.
func Wakeup(policy pktgen.NeedWakeup, virtual bool, why string) (bool, string) {
	switch policy {
	case pktgen.NeedWakeupOn:
		return true, "need_wakeup on: asked for"
	case pktgen.NeedWakeupOff:
		return false, "need_wakeup off: asked for"
	}
	if virtual {
		return false, "need_wakeup off (auto): " + why + ", whose transmit runs inside each kick"
	}
	return true, "need_wakeup on (auto): " + why
}
