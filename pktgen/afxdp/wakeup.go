package afxdp

import (
	"github.com/linerate/linerate/internal/xsk"
	"github.com/linerate/linerate/pktgen"
)

// Virtual is xsk.Virtual: whether the device with ethtool driver info
// driver and busInfo is virtual, and why; the AF_XDP receiver takes the
// same rule.
func Virtual(driver, busInfo string) (bool, string) { return xsk.Virtual(driver, busInfo) }

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
