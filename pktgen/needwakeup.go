package pktgen

import (
	"fmt"
	"slices"

	"github.com/linerate/linerate/internal/enum"
)

// NeedWakeup is the AF_XDP sender's need_wakeup policy (`--need-wakeup`,
// a run's and a campaign's spec, an agent's Configure): whether its
// sockets bind with XDP_USE_NEED_WAKEUP, so that the application makes a
// syscall only when the kernel's ring asks for one.
type NeedWakeup string

// NeedWakeup policies.
const (
	// NeedWakeupAuto is on for a physical NIC and off for a virtual
	// device (pktgen/afxdp says how it tells them apart).
	NeedWakeupAuto NeedWakeup = "auto"
	// NeedWakeupOn binds with the flag (and without it, with a warning,
	// on a kernel that refuses it).
	NeedWakeupOn NeedWakeup = "on"
	// NeedWakeupOff binds without it: a syscall after every batch.
	NeedWakeupOff NeedWakeup = "off"
)

// NeedWakeups lists the valid policies, the default first.
var NeedWakeups = []NeedWakeup{NeedWakeupAuto, NeedWakeupOn, NeedWakeupOff}

// Check is nil when n is one of NeedWakeups or empty (auto); otherwise
// it names n and the valid values, for the caller to prefix with its
// field.
func (n NeedWakeup) Check() error {
	if n == "" || slices.Contains(NeedWakeups, n) {
		return nil
	}
	return fmt.Errorf("%q: valid values are %s", n, enum.And(NeedWakeups))
}
