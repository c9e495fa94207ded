//go:build linux

package xdp

import (
	"errors"
	"fmt"
	"slices"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/linerate/linerate/internal/xdpfeat"
)

// ownProgName is the name of the program the backend attaches to a
// sending interface whose driver needs one (ownProgram): what `ip link`
// and bpftool show while a send has it attached.
const ownProgName = "lr_xmit_pass"

// xdpState is what XDP program an interface has attached now, as netlink
// tells (IFLA_XDP): the mode (IFLA_XDP_ATTACHED: none, drv, skb, hw or
// multi) and the program's id.
type xdpState struct {
	mode uint32
	id   uint32
}

// modeName is an IFLA_XDP_ATTACHED mode as `ip link` names it.
func modeName(mode uint32) string {
	switch mode {
	case nl.XDP_ATTACHED_DRV:
		return "native (xdpdrv)"
	case nl.XDP_ATTACHED_SKB:
		return "generic (xdpgeneric)"
	case nl.XDP_ATTACHED_HW:
		return "offloaded (xdpoffload)"
	case xdpAttachedMulti:
		return "several modes"
	}
	return "none"
}

const xdpAttachedMulti = 4

// ownPlan is what a send must do about the sending interface's own XDP
// program before it can transmit.
type ownPlan struct {
	// attach: the driver needs a native program on the interface and
	// it has none: the backend attaches its own for the send.
	attach bool
	// use: the driver needs one and a native program is attached (a
	// user's, or a receiver's on the same interface): the send uses it
	// and leaves it.
	use bool
	// why is the driver's need, for the summary's note ("" when it has
	// none).
	why string
	// used is the program used (use): its id and name.
	used xdpState
	name string
}

// note is what the summary says of the interface's program: that the
// backend attached its own and why, or used the one there; "" when the
// driver needs none.
func (p ownPlan) note(iface string) string {
	switch {
	case p.attach:
		return fmt.Sprintf("attached its own XDP program %s (XDP_PASS, native mode) to %s for the send and detached it after: %s", ownProgName, iface, p.why)
	case p.use:
		name := ""
		if p.name != "" {
			name = " " + p.name
		}
		return fmt.Sprintf("sent through the native XDP program%s (id %d) already attached to %s, and left it there: %s", name, p.used.id, iface, p.why)
	}
	return ""
}

// needsOwn decides what a send from iface needs: whether its driver
// transmits XDP frames only while a native XDP program is attached to
// iface itself, and what to do about the program attached now.
//
// The kernel says so where it can: with xdp-features (6.3+, featKnown) a
// driver without ndo-xmit needs one (a veth is the exception: its peer
// decides, and probe refuses it before this). Without them (the VM lab's
// Debian 6.1 guests) the driver's name says: ownProgramDrivers. force is
// a test's: a veth that transmits either way, made to need one.
//
// A generic (skb) program, or one in another mode only, refuses the
// send by name: the kernel will not attach a native program beside a
// generic one, and this backend never replaces or detaches a program it
// did not attach.
func needsOwn(iface, driver string, feat uint64, featKnown, force bool, st xdpState, progName string) (ownPlan, error) {
	var why string
	switch {
	case force:
		why = fmt.Sprintf("the test made driver %s need one", driver)
	case featKnown && feat&xdpfeat.NdoXmit == 0:
		why = fmt.Sprintf("driver %s has no ndo-xmit in its xdp-features until an XDP program is attached to %s", driver, iface)
	case !featKnown && slices.Contains(ownProgramDrivers, driver):
		why = fmt.Sprintf("driver %s transmits XDP frames only while an XDP program is attached to %s itself in the driver (it sets up its XDP transmit queues then), and this kernel has no xdp-features to say otherwise", driver, iface)
	default:
		return ownPlan{}, nil
	}
	switch st.mode {
	case nl.XDP_ATTACHED_NONE:
		return ownPlan{attach: true, why: why}, nil
	case nl.XDP_ATTACHED_DRV, xdpAttachedMulti:
		// A native program (multi: drv beside hw; the kernel refuses skb
		// beside drv): its transmit queues exist.
		return ownPlan{use: true, why: why, used: st, name: progName}, nil
	}
	name := ""
	if progName != "" {
		name = " " + progName
	}
	return ownPlan{}, unsupported(iface, "%s: the backend would attach its own native XDP program for the send, but an XDP program%s (id %d) is attached to %s in %s mode, and the kernel refuses a native program beside it (and this backend never replaces one it did not attach): detach it (ip link set dev %s xdpgeneric off), attach it natively instead, or use another backend (kernel, afxdp, afpacket)",
		why, name, st.id, iface, modeName(st.mode), iface)
}

// readXDPState reads iface's attached XDP program (ifindex), in the
// calling thread's namespace, and the program's name where the kernel
// gives it.
func readXDPState(ifindex int) (xdpState, string, error) {
	l, err := netlink.LinkByIndex(ifindex)
	if err != nil {
		return xdpState{}, "", fmt.Errorf("read the XDP program of ifindex %d: %w", ifindex, err)
	}
	x := l.Attrs().Xdp
	if x == nil || !x.Attached {
		return xdpState{}, "", nil
	}
	st := xdpState{mode: x.AttachMode, id: x.ProgId}
	return st, progName(st.id), nil
}

// progName is program id's name, or "" when it cannot be read.
func progName(id uint32) string {
	if id == 0 {
		return ""
	}
	p, err := ebpf.NewProgramFromID(ebpf.ProgramID(id))
	if err != nil {
		return ""
	}
	defer p.Close()
	info, err := p.Info()
	if err != nil {
		return ""
	}
	return info.Name
}

// ownProgram is the backend's own program on a sending interface:
// XDP_PASS (received frames go on to the stack as before), attached in
// native mode through a BPF link that nothing pins. The link lives as
// long as its file descriptor: closed by detach on every path out of a
// run, and by the kernel when the process ends however it ends (a
// SIGKILL included), so it never outlives the send. This is how the
// receiver's counting program and the lab's port programs are held too.
type ownProgram struct {
	prog *ebpf.Program
	lnk  link.Link
}

// attachOwn loads the program and attaches it natively to ifindex, in
// the calling thread's namespace.
func attachOwn(iface string, ifindex int) (*ownProgram, error) {
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: ownProgName, Type: ebpf.XDP, License: "GPL",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, xdpPass), asm.Return()}})
	if err != nil {
		return nil, fmt.Errorf("xdp backend on %s: load its own XDP program %s: %w", iface, ownProgName, err)
	}
	lnk, err := link.AttachXDP(link.XDPOptions{Program: prog, Interface: ifindex, Flags: link.XDPDriverMode})
	if err != nil {
		prog.Close()
		why := err
		var errno unix.Errno
		if errors.As(err, &errno) {
			why = errno
		}
		return nil, unsupported(iface, "attach its own XDP program %s to %s in native mode (the driver transmits XDP frames only with one): %v", ownProgName, iface, why)
	}
	return &ownProgram{prog: prog, lnk: lnk}, nil
}

// detach removes the program from the interface and frees it
// (idempotent).
func (o *ownProgram) detach() error {
	if o == nil {
		return nil
	}
	var err error
	if o.lnk != nil {
		err = o.lnk.Close()
		o.lnk = nil
	}
	if o.prog != nil {
		o.prog.Close()
		o.prog = nil
	}
	if err != nil {
		return fmt.Errorf("xdp backend: detach its own XDP program %s: %w", ownProgName, err)
	}
	return nil
}
