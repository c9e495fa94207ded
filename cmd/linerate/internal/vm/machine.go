package vm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
)

// DefaultMemory is a Machine's memory when Memory is empty.
const DefaultMemory = "1G"

// Files of a machine's Dir.
const (
	ConsoleLog = "console.log"    // the guest's ttyS0: kernel messages and /init's lines
	AgentLog   = "agent.log"      // the guest's ttyS1: the Script's stdout and stderr
	ShellSock  = "shell.sock"     // the guest's ttyS2: a root shell (Exec)
	PidFile    = "qemu.pid"       // written by qemu (-pidfile)
	QEMULog    = "qemu.log"       // qemu's own stdout and stderr
	InitrdFile = "initramfs.cpio" // the guest's root filesystem
	shellLock  = "shell.lock"     // one Exec at a time, across processes
)

// NIC is one guest network interface on an existing host tap.
type NIC struct {
	// Tap is the host tap qemu attaches to, in the network namespace
	// qemu runs in: multi_queue for a data NIC of more than one queue
	// pair (qemu opens it with IFF_MULTI_QUEUE then, and the kernel
	// refuses a mismatch), single-queue otherwise.
	Tap  string
	MAC  net.HardwareAddr
	Addr netip.Prefix // set on the interface by /init
	// Addr6 is an IPv6 address /init adds too (none when zero).
	Addr6 netip.Prefix
	Name  string // the interface's name in the guest ("data0", "mgmt0"): /init renames the NIC with MAC to it
}

// Machine is one guest meant to run for long: a lab host whose Script
// (a linerate agent) runs until it is stopped, reachable over Mgmt, with
// its data NIC on NUMA node 1.
type Machine struct {
	Name   string
	Kernel *Kernel
	Layout Layout
	Memory string // qemu -m, DefaultMemory when empty, split evenly between the two nodes
	// Data is virtio-net-pci with Layout.Queues queue pairs (mq=on,
	// vectors=2*Queues+2) behind a PCI expander bridge on NUMA node 1.
	Data NIC
	// Mgmt is a single-queue virtio-net-pci on the root bus.
	Mgmt NIC
	// Modules are loaded with their dependencies before Script;
	// virtio_pci and virtio_net always are.
	Modules []string
	Files   map[string]string // guest path → host path, copied with their permissions
	// Script is run by /bin/sh in its own process group after setup,
	// stdout and stderr to Dir/agent.log; the guest powers off when it
	// ends.
	Script string
	// Dir holds the guest's files (ConsoleLog, AgentLog, ShellSock,
	// PidFile, QEMULog, InitrdFile); absolute, made when missing.
	Dir string
	// Command makes the qemu command (the lab's runs it inside the
	// switch's network namespace); it must exec qemu itself, as `ip netns
	// exec` and nsenter do, not fork it. exec.CommandContext when nil.
	Command func(ctx context.Context, name string, arg ...string) *exec.Cmd
	Accel   string // AccelKVM or AccelTCG; AccelFor(Kernel) when empty
	Log     hclog.Logger
}

// guest paths of the machine's initramfs and of its state in /run.
const (
	guestMachineScript = "/linerate/script"
	guestStateDir      = "/run/linerate"
	guestScriptPid     = guestStateDir + "/script.pid"
)

// setupFailed starts the console line /init prints when setup fails;
// readyLine is the one it prints when the Script has started.
const (
	setupFailed = "linerate-vm: setup failed: "
	readyLine   = "linerate-vm: ready"
)

// ErrSetup is returned (by Running.Err) when the guest's /init could not
// set the guest up; the message names what failed.
var ErrSetup = errors.New("guest setup failed")

// maxSocketPath is sizeof(sockaddr_un.sun_path) on Linux.
const maxSocketPath = 108

// validate checks the fields and returns the memory in MiB.
func (m *Machine) validate() (int, error) {
	if m.Name == "" {
		return 0, errors.New("machine: Name is empty")
	}
	if m.Kernel == nil {
		return 0, fmt.Errorf("machine %s: Kernel is nil (use FetchKernel)", m.Name)
	}
	if err := m.Layout.Validate(); err != nil {
		return 0, fmt.Errorf("machine %s: %w", m.Name, err)
	}
	mem := m.Memory
	if mem == "" {
		mem = DefaultMemory
	}
	mib, err := memoryMiB(mem)
	if err != nil {
		return 0, fmt.Errorf("machine %s: %w", m.Name, err)
	}
	if m.Dir == "" || !filepath.IsAbs(m.Dir) {
		return 0, fmt.Errorf("machine %s: Dir %q: want an absolute directory", m.Name, m.Dir)
	}
	if sock := filepath.Join(m.Dir, ShellSock); len(sock) >= maxSocketPath {
		return 0, fmt.Errorf("machine %s: Dir %q: too long for the shell socket %s (a unix socket path has at most %d bytes)", m.Name, m.Dir, ShellSock, maxSocketPath-1)
	}
	if m.Accel != "" && m.Accel != AccelKVM && m.Accel != AccelTCG {
		return 0, fmt.Errorf("machine %s: Accel %q: want %s, %s or empty", m.Name, m.Accel, AccelKVM, AccelTCG)
	}
	for _, n := range []struct {
		what string
		nic  NIC
	}{{"Data", m.Data}, {"Mgmt", m.Mgmt}} {
		switch {
		case n.nic.Tap == "":
			return 0, fmt.Errorf("machine %s: %s.Tap is empty", m.Name, n.what)
		case len(n.nic.MAC) != 6:
			return 0, fmt.Errorf("machine %s: %s.MAC %q: want a 6-byte Ethernet address", m.Name, n.what, n.nic.MAC)
		case !n.nic.Addr.IsValid():
			return 0, fmt.Errorf("machine %s: %s.Addr is not set", m.Name, n.what)
		case n.nic.Addr6.IsValid() && !n.nic.Addr6.Addr().Is6():
			return 0, fmt.Errorf("machine %s: %s.Addr6 %s: want an IPv6 address", m.Name, n.what, n.nic.Addr6)
		case n.nic.Name == "" || len(n.nic.Name) > 15 || strings.ContainsAny(n.nic.Name, "/ :'\"\\"):
			return 0, fmt.Errorf("machine %s: %s.Name %q: want an interface name of 1 to 15 characters without / : space or quotes", m.Name, n.what, n.nic.Name)
		}
	}
	if m.Data.Name == m.Mgmt.Name || m.Data.MAC.String() == m.Mgmt.MAC.String() {
		return 0, fmt.Errorf("machine %s: Data and Mgmt share a name or a MAC", m.Name)
	}
	return mib, nil
}

// qemuArgs is the command line: no default devices, two NUMA nodes with
// half the memory and half the CPUs each, the three serial ports
// (console, agent log, shell), the data NIC behind a pxb on node 1 and
// the management NIC on the root bus, the kernel and initramfs.
func (m *Machine) qemuArgs(accel string, memMiB int) []string {
	l := m.Layout
	cpu := "max"
	if accel == AccelKVM {
		cpu = "host"
	}
	half := memMiB / 2
	d := m.Dir
	args := []string{
		"-name", m.Name,
		"-accel", accel, "-cpu", cpu,
		"-m", strconv.Itoa(memMiB) + "M",
		"-smp", fmt.Sprintf("%d,sockets=2,cores=%d,threads=1", l.VCPUs, l.VCPUs/2),
		"-object", fmt.Sprintf("memory-backend-ram,id=mem0,size=%dM", half),
		"-object", fmt.Sprintf("memory-backend-ram,id=mem1,size=%dM", memMiB-half),
		"-numa", "node,nodeid=0,cpus=" + cpuList(l.Node0CPUs()) + ",memdev=mem0",
		"-numa", "node,nodeid=1,cpus=" + cpuList(l.Node1CPUs()) + ",memdev=mem1",
		"-nodefaults", "-no-user-config", "-display", "none", "-monitor", "none", "-no-reboot",
		"-chardev", "file,id=console,path=" + filepath.Join(d, ConsoleLog),
		"-serial", "chardev:console",
		"-chardev", "file,id=agent,path=" + filepath.Join(d, AgentLog),
		"-serial", "chardev:agent",
		"-chardev", "socket,id=shell,path=" + filepath.Join(d, ShellSock) + ",server=on,wait=off",
		"-serial", "chardev:shell",
		"-device", "pxb,id=pxb1,bus_nr=0x80,numa_node=1,bus=pci.0",
		"-netdev", fmt.Sprintf("tap,id=data,ifname=%s,script=no,downscript=no,queues=%d,vhost=off", m.Data.Tap, l.Queues),
		// romfile= skips the iPXE option ROM: nothing boots from the network.
		// ctrl_vlan=off: the device passes every 802.1Q tag; with it on,
		// qemu drops a tagged frame unless the guest registered its VLAN
		// (a VLAN interface of its own), and the lab's receivers count
		// tagged test frames on data0 itself.
		"-device", fmt.Sprintf("virtio-net-pci,netdev=data,mac=%s,bus=pxb1,mq=on,vectors=%d,ctrl_vlan=off,romfile=", m.Data.MAC, 2*l.Queues+2),
		"-netdev", "tap,id=mgmt,ifname=" + m.Mgmt.Tap + ",script=no,downscript=no,vhost=off",
		"-device", "virtio-net-pci,netdev=mgmt,mac=" + m.Mgmt.MAC.String() + ",bus=pci.0,romfile=",
		"-kernel", m.Kernel.Vmlinuz,
		"-initrd", filepath.Join(d, InitrdFile),
		"-append", "console=ttyS0 panic=-1",
		"-pidfile", filepath.Join(d, PidFile),
	}
	return args
}

// modules are the modules to load: virtio_pci and virtio_net, then the
// caller's.
func (m *Machine) modules() []string {
	mods := []string{"virtio_pci", "virtio_net"}
	for _, n := range m.Modules {
		if !slices.Contains(mods, n) {
			mods = append(mods, n)
		}
	}
	return mods
}

// Start builds the initramfs in Dir, starts qemu in a process group of
// its own (no parent-death signal: a guest outlives a killed
// coordinator; StopDir stops it later) and returns once the guest
// writes to its console. ctx bounds Start only: qemu is killed when ctx
// ends before that, never after.
func (m *Machine) Start(ctx context.Context) (*Running, error) {
	mib, err := m.validate()
	if err != nil {
		return nil, err
	}
	log := m.Log
	if log == nil {
		log = hclog.NewNullLogger()
	}
	if err := Available(); err != nil {
		return nil, fmt.Errorf("start machine %s: %w", m.Name, err)
	}
	if pid, ok := RunningQEMU(m.Dir); ok {
		return nil, fmt.Errorf("start machine %s: qemu pid %d already runs a guest in %s (StopDir stops it)", m.Name, pid, m.Dir)
	}
	db, err := m.Kernel.Modules()
	if err != nil {
		return nil, fmt.Errorf("start machine %s: %w", m.Name, err)
	}
	mods, err := db.Resolve(m.modules()...)
	if err != nil {
		return nil, fmt.Errorf("start machine %s: %w", m.Name, err)
	}
	if err := os.MkdirAll(m.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("start machine %s: %w", m.Name, err)
	}
	for _, f := range []string{ConsoleLog, AgentLog, ShellSock, PidFile, QEMULog, InitrdFile} {
		if err := os.Remove(filepath.Join(m.Dir, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("start machine %s: clear %s: %w", m.Name, f, err)
		}
	}
	initrd := &Initramfs{
		Busybox:   m.Kernel.Busybox,
		Modules:   mods,
		Files:     m.Files,
		Generated: map[string]string{guestMachineScript: m.Script},
		Init:      renderMachineInit(m, mods),
	}
	if err := initrd.WriteFile(filepath.Join(m.Dir, InitrdFile)); err != nil {
		return nil, fmt.Errorf("start machine %s: %w", m.Name, err)
	}
	accel := m.Accel
	if accel == "" {
		if accel, err = AccelFor(m.Kernel); err != nil {
			return nil, fmt.Errorf("start machine %s: %w", m.Name, err)
		}
	}
	qlog, err := os.OpenFile(filepath.Join(m.Dir, QEMULog), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("start machine %s: %w", m.Name, err)
	}
	defer qlog.Close() // qemu has its own copy
	command := m.Command
	if command == nil {
		command = exec.CommandContext
	}
	args := m.qemuArgs(accel, mib)
	// The command outlives ctx: only Start is bounded by it.
	cmd := command(context.WithoutCancel(ctx), QEMU, args...)
	cmd.Stdin = nil
	// A file, not a pipe: qemu must not die of SIGPIPE when we do.
	cmd.Stdout, cmd.Stderr = qlog, qlog
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	setOwnGroup(cmd.SysProcAttr)
	log.Debug("starting guest", "name", m.Name, "accel", accel, "modules", ModuleNames(mods), "cmd", strings.Join(cmd.Args, " "))
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start machine %s: %w", m.Name, err)
	}
	r := &Running{name: m.Name, dir: m.Dir, cmd: cmd, done: make(chan struct{}), log: log, started: start, accel: accel}
	go r.wait()
	if err := r.waitStarted(ctx); err != nil {
		_ = r.Kill()
		<-r.done
		return nil, fmt.Errorf("start machine %s: %w", m.Name, err)
	}
	log.Info("guest started", "name", m.Name, "pid", r.pid, "accel", accel, "took", time.Since(start).Round(time.Millisecond))
	return r, nil
}
