//go:build linux

package lab

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"sync"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/linerate/linerate/cmd/linerate/internal/vm"
	lrnetns "github.com/linerate/linerate/internal/netns"
)

// A VM host's layout when the spec leaves it zero: 4 vCPUs in two NUMA
// nodes, a data NIC of 4 queue pairs on node 1.
const (
	DefaultVCPUs    = 4
	DefaultVMQueues = 4
	// maxVMHosts bounds a VM lab: each host is a qemu guest with
	// vmMemory of memory and DefaultVCPUs threads.
	maxVMHosts = 16
	vmMemory   = "1G"
	// vmStop is how long a VM host may take to stop its agent (which
	// restores its IRQs) and power off before qemu is killed.
	vmStop = 30 * time.Second
)

// Layout is a VM host's vCPUs and data NIC queues, defaults filled in.
func (spec Spec) Layout() vm.Layout {
	l := vm.Layout{VCPUs: spec.VCPUs, Queues: spec.Queues}
	if l.VCPUs == 0 {
		l.VCPUs = DefaultVCPUs
	}
	if l.Queues == 0 {
		l.Queues = DefaultVMQueues
	}
	return l
}

func (spec Spec) validateVM() error {
	if n := spec.Senders + spec.Receivers; n > maxVMHosts {
		return fmt.Errorf("lab %s: %d VM hosts: at most %d (each is a qemu guest with %s of memory)", spec.Name, n, maxVMHosts, vmMemory)
	}
	if err := spec.Layout().Validate(); err != nil {
		return fmt.Errorf("lab %s: %w", spec.Name, err)
	}
	return nil
}

// vmMAC is a VM host's data (nic 0) or management (nic 1) MAC: locally
// administered, unique in the lab.
func vmMAC(h *Host, nic byte) net.HardwareAddr {
	role := byte(0)
	if h.Role == "receiver" {
		role = 1
	}
	return net.HardwareAddr{0x02, 0x4c, 0x52, role, byte(h.Index() + 1), nic}
}

// addVMHost makes the switch's side of a VM host: a tap h.Name with the
// data NIC's queues and a tap "m"+h.Name for its management NIC, both in
// the switch namespace, where qemu runs (StartAgents boots the guest).
// h.Data and h.Mgmt describe the guest's NICs: no namespace of ours
// holds them.
func (l *Lab) addVMHost(h *Host, addr, addr6, mgmt netip.Prefix) error {
	var err error
	if h.Switch, err = l.tap(h.Name, l.Spec.Layout().Queues); err != nil {
		return err
	}
	h.Data = &lrnetns.Link{Name: "data0", MAC: vmMAC(h, 0), Addr: addr, Addr6: addr6}
	if mgmt.IsValid() {
		if _, err := l.tap("m"+h.Name, 1); err != nil {
			return fmt.Errorf("management %w", err)
		}
		h.Mgmt = &lrnetns.Link{Name: "mgmt0", MAC: vmMAC(h, 1), Addr: mgmt}
	}
	return nil
}

// tap creates a persistent tap in the switch namespace, multiqueue when
// queues > 1 (qemu opens one file per queue then), up, its own IPv6
// quiet (a switch port sends nothing of its own).
func (l *Lab) tap(name string, queues int) (*lrnetns.Link, error) {
	var out *lrnetns.Link
	err := l.Switch.Do(func() error {
		flags := netlink.TUNTAP_NO_PI | netlink.TUNTAP_VNET_HDR
		if queues > 1 {
			flags |= netlink.TUNTAP_MULTI_QUEUE
		}
		t := &netlink.Tuntap{LinkAttrs: netlink.LinkAttrs{Name: name}, Mode: netlink.TUNTAP_MODE_TAP, Flags: flags, Queues: 1}
		if err := netlink.LinkAdd(t); err != nil {
			return fmt.Errorf("add: %w", err)
		}
		for _, f := range t.Fds {
			f.Close() // persistent: the device stays for qemu
		}
		if err := lrnetns.QuietIPv6(name); err != nil {
			return err
		}
		link, err := netlink.LinkByName(name)
		if err != nil {
			return err
		}
		if err := netlink.LinkSetUp(link); err != nil {
			return fmt.Errorf("set up: %w", err)
		}
		out = &lrnetns.Link{NS: l.Switch, Name: name, Index: link.Attrs().Index, MAC: link.Attrs().HardwareAddr}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("tap %s in %s: %w", name, l.Switch.Name, err)
	}
	return out, nil
}

// stopMachines stops every VM host (their agents restore and leave, the
// guests power off; qemu is killed after vmStop), all at once.
func (l *Lab) stopMachines() error {
	var wg sync.WaitGroup
	errs := make([]error, len(l.machines))
	for i, m := range l.machines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := m.run.Stop(vmStop); err != nil {
				errs[i] = fmt.Errorf("stop VM host %s: %w", m.host.Name, err)
			}
		}()
	}
	wg.Wait()
	l.machines = nil
	return errors.Join(errs...)
}

// machine is a VM host's running guest.
type machine struct {
	host *Host
	run  *vm.Running
	dir  string // its directory: console.log, agent.log, shell.sock, qemu.pid
	// started is when its qemu was started.
	started time.Time
}

// StopLeftoverVMs stops the guests a killed lab left in dir (a qemu.pid
// in a host's directory whose process is still that guest's qemu): their
// agents stop and restore, then qemu ends. It returns their host names.
func StopLeftoverVMs(dir string, timeout time.Duration) ([]string, error) {
	pids, err := filepath.Glob(filepath.Join(dir, "*", vm.PidFile))
	if err != nil {
		return nil, err
	}
	var stopped []string
	var errs []error
	for _, pf := range pids {
		hostDir := filepath.Dir(pf)
		if _, running := vm.RunningQEMU(hostDir); !running {
			continue
		}
		if err := vm.StopDir(hostDir, timeout); err != nil {
			errs = append(errs, fmt.Errorf("stop VM host %s: %w", filepath.Base(hostDir), err))
			continue
		}
		stopped = append(stopped, filepath.Base(hostDir))
	}
	return stopped, errors.Join(errs...)
}
