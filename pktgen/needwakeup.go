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
	NeedWakeupAuto NeedWakeup = "auto" // on for a physical NIC, off for a virtual device (internal/xsk.Virtual)
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

// CheckFor is Check, and refuses on and off for an engine without an
// AF_XDP socket (afxdp false): need_wakeup is a socket's bind flag, of
// the afxdp backend and the afxdp receiver method only; engine names
// what was asked for (e.g. "backend xdp"), for the caller to prefix with
// its field.
func (n NeedWakeup) CheckFor(afxdp bool, engine string) error {
	if err := n.Check(); err != nil {
		return err
	}
	if n == "" || n == NeedWakeupAuto || afxdp {
		return nil
	}
	return fmt.Errorf("%s: an AF_XDP socket's bind flag (the afxdp backend's, the afxdp receiver method's); %s has none: want auto, or an afxdp engine", n, engine)
}

// Choose is the need_wakeup choice of policy n on a device, and why, for
// the AF_XDP sender and receiver alike; virtual and why are
// xsk.Virtual's answer for the device. Auto is off on a virtual device,
// which transmits inside each kick (sendto) and delivers to a socket
// inside the sender's softirq, so the flag only adds a check; on for a
// physical NIC, whose NAPI works the rings by itself and asks for a
// syscall only when it ran dry.
func (n NeedWakeup) Choose(virtual bool, why string) (bool, string) {
	switch n {
	case NeedWakeupOn:
		return true, "need_wakeup on: asked for"
	case NeedWakeupOff:
		return false, "need_wakeup off: asked for"
	}
	if virtual {
		return false, "need_wakeup off (auto): " + why
	}
	return true, "need_wakeup on (auto): " + why
}
