package pktgen

import (
	"fmt"

	"github.com/linerate/linerate/internal/enum"
)

// NeedWakeup is the AF_XDP sender's need_wakeup policy (`--need-wakeup`,
// a run's and a campaign's spec, an agent's Configure): whether its
// sockets bind with XDP_USE_NEED_WAKEUP, so that the application makes a
// syscall only when the kernel's ring asks for one.
type NeedWakeup string

// NeedWakeup policies, the default first.
const (
	NeedWakeupAuto NeedWakeup = "auto" // on for a physical NIC, off for a virtual device (pktgen/afxdp.Virtual)
	NeedWakeupOn   NeedWakeup = "on"   // the flag (bound without it, with a warning, where the kernel refuses it)
	NeedWakeupOff  NeedWakeup = "off"  // no flag: a syscall after every batch
)

// NeedWakeups is the one list of policies every check, error and help says.
var NeedWakeups = []NeedWakeup{NeedWakeupAuto, NeedWakeupOn, NeedWakeupOff}

// Check is nil when n is one of NeedWakeups or empty (auto); otherwise
// it names n and the valid values, for the caller to prefix with its
// field.
func (n NeedWakeup) Check() error {
	switch n {
	case "", NeedWakeupAuto, NeedWakeupOn, NeedWakeupOff:
		return nil
	}
	return fmt.Errorf("%q: valid values are %s", n, enum.And(NeedWakeups))
}
