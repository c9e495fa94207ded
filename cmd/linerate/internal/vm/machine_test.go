package vm

import (
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func testMachine(dir string) *Machine {
	return &Machine{
		Name:   "s1",
		Kernel: &Kernel{Vmlinuz: "/k/vmlinuz"},
		Layout: Layout{VCPUs: 4, Queues: 4},
		Data:   NIC{Tap: "lrd-s1", MAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, Addr: netip.MustParsePrefix("198.18.0.1/24"), Name: "data0"},
		Mgmt:   NIC{Tap: "lrm-s1", MAC: net.HardwareAddr{2, 0, 0, 0, 1, 1}, Addr: netip.MustParsePrefix("198.19.0.1/24"), Name: "mgmt0"},
		Script: "exec linerate agent",
		Dir:    dir,
	}
}

// argAfter is the argument following each occurrence of flag.
func argsAfter(args []string, flag string) []string {
	var out []string
	for i := 0; i+1 < len(args); i++ {
		if args[i] == flag {
			out = append(out, args[i+1])
		}
	}
	return out
}

func TestMachineQEMUArgs(t *testing.T) {
	m := testMachine("/run/lab/s1")
	mib, err := m.validate()
	if err != nil {
		t.Fatal(err)
	}
	args := m.qemuArgs(AccelTCG, mib)
	line := strings.Join(args, " ")
	for _, want := range []string{
		"-accel tcg -cpu max",
		"-m 1024M -smp 4,sockets=2,cores=2,threads=1",
		"-object memory-backend-ram,id=mem0,size=512M -object memory-backend-ram,id=mem1,size=512M",
		"-numa node,nodeid=0,cpus=0-1,memdev=mem0 -numa node,nodeid=1,cpus=2-3,memdev=mem1",
		"-nodefaults",
		"-no-reboot",
		"-device pxb,id=pxb1,bus_nr=0x80,numa_node=1,bus=pci.0",
		"-netdev tap,id=data,ifname=lrd-s1,script=no,downscript=no,queues=4,vhost=off",
		"-device virtio-net-pci,netdev=data,mac=02:00:00:00:00:01,bus=pxb1,mq=on,vectors=10,ctrl_vlan=off,romfile=",
		"-netdev tap,id=mgmt,ifname=lrm-s1,script=no,downscript=no,vhost=off",
		"-device virtio-net-pci,netdev=mgmt,mac=02:00:00:00:01:01,bus=pci.0,romfile=",
		"-kernel /k/vmlinuz -initrd /run/lab/s1/initramfs.cpio",
		"-pidfile /run/lab/s1/qemu.pid",
	} {
		if !strings.Contains(line, want) {
			t.Errorf("qemu args lack %q:\n%s", want, line)
		}
	}
	// The serial ports in order: ttyS0 console, ttyS1 agent log, ttyS2 shell.
	if got := argsAfter(args, "-serial"); strings.Join(got, " ") != "chardev:console chardev:agent chardev:shell" {
		t.Errorf("serial ports %v", got)
	}
	if got := argsAfter(args, "-chardev"); strings.Join(got, " ") != "file,id=console,path=/run/lab/s1/console.log "+
		"file,id=agent,path=/run/lab/s1/agent.log socket,id=shell,path=/run/lab/s1/shell.sock,server=on,wait=off" {
		t.Errorf("chardevs %v", got)
	}
	if strings.Contains(line, "queues=4,vhost=off -device virtio-net-pci,netdev=mgmt") || strings.Count(line, "mq=on") != 1 {
		t.Errorf("the management NIC is not single-queue:\n%s", line)
	}
	if kvm := strings.Join(m.qemuArgs(AccelKVM, mib), " "); !strings.Contains(kvm, "-accel kvm -cpu host") {
		t.Errorf("kvm args: %s", kvm)
	}
}

func TestMachineValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(m *Machine)
		want   string
	}{
		{"no name", func(m *Machine) { m.Name = "" }, "Name is empty"},
		{"no kernel", func(m *Machine) { m.Kernel = nil }, "Kernel is nil"},
		{"odd vcpus", func(m *Machine) { m.Layout.VCPUs = 3 }, "--vcpus 3"},
		{"bad memory", func(m *Machine) { m.Memory = "1.5G" }, `memory "1.5G"`},
		{"relative dir", func(m *Machine) { m.Dir = "lab/s1" }, `Dir "lab/s1"`},
		{"long dir", func(m *Machine) { m.Dir = "/" + strings.Repeat("d", 100) }, "too long for the shell socket"},
		{"bad accel", func(m *Machine) { m.Accel = "hvf" }, `Accel "hvf"`},
		{"no data tap", func(m *Machine) { m.Data.Tap = "" }, "Data.Tap is empty"},
		{"short mac", func(m *Machine) { m.Mgmt.MAC = net.HardwareAddr{1, 2} }, "Mgmt.MAC"},
		{"no addr", func(m *Machine) { m.Data.Addr = netip.Prefix{} }, "Data.Addr is not set"},
		{"long name", func(m *Machine) { m.Mgmt.Name = "mgmt-interface-0" }, `Mgmt.Name "mgmt-interface-0"`},
		{"same name", func(m *Machine) { m.Mgmt.Name = "data0" }, "share a name or a MAC"},
	} {
		m := testMachine("/run/lab/s1")
		tc.change(m)
		if _, err := m.validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

func TestRenderMachineInit(t *testing.T) {
	m := testMachine("/d")
	s := renderMachineInit(m, []Module{{Name: "virtio_pci"}, {Name: "virtio_net"}})
	for _, want := range []string{
		"#!/bin/busybox sh\n",
		"mount -t bpf bpf /sys/fs/bpf || fail",
		"mount -t tmpfs -o mode=755 tmpfs /run || fail",
		"ip link set lo up || fail",
		"insmod /lib/modules/linerate/virtio_pci.ko || fail 'insmod virtio_pci'\ninsmod /lib/modules/linerate/virtio_net.ko || fail 'insmod virtio_net'\n",
		"nic '02:00:00:00:00:01' 'data0' '198.18.0.1/24' ''\necho 10000 >/proc/sys/net/core/netdev_max_backlog",
		"nic '02:00:00:00:01:01' 'mgmt0' '198.19.0.1/24'\n",
		"exec 3<>/dev/ttyS2\n\tstty raw -echo <&3",
		// IPv6 on, quiet: nothing of the guest's own reaches the data path.
		"for kv in addr_gen_mode=1 accept_dad=0 dad_transmits=0 router_solicitations=0 accept_ra=0 autoconf=0; do",
		"shell_loop &\n",
		"setsid /bin/sh /linerate/script </dev/null >/dev/ttyS1 2>&1 &\npid=$!\necho \"$pid\" >/run/linerate/script.pid",
		"wait \"$pid\"\n",
		"poweroff -f\n",
		"fail() { echo 'linerate-vm: setup failed: '\"$*\"; poweroff -f;",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("/init lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "disable_ipv6") {
		t.Errorf("/init disables IPv6:\n%s", s)
	}
	m.Data.Addr6 = netip.MustParsePrefix("2001:2::1/64")
	if s := renderMachineInit(m, nil); !strings.Contains(s, "nic '02:00:00:00:00:01' 'data0' '198.18.0.1/24' '2001:2::1/64'\n") ||
		!strings.Contains(s, `ip -6 addr add "$4" dev "$2"`) {
		t.Errorf("/init does not add the data NIC's IPv6 address:\n%s", s)
	}
	// It is a shell script the host's sh can parse.
	if sh, err := exec.LookPath("sh"); err == nil {
		p := filepath.Join(t.TempDir(), "init")
		if err := os.WriteFile(p, []byte(s), 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(sh, "-n", p).CombinedOutput(); err != nil {
			t.Errorf("sh -n /init: %v: %s", err, out)
		}
	}
}

func TestSetupFailure(t *testing.T) {
	dir := t.TempDir()
	if got := setupFailure(dir); got != "" {
		t.Errorf("no console: %q", got)
	}
	con := "[    1.2] virtio_net virtio1 eth1: renamed\r\n" + setupFailed + "no NIC with MAC 02:00:00:00:00:01 (for data0) in /sys/class/net\r\n[ 1.3] reboot: Power down\r\n"
	if err := os.WriteFile(filepath.Join(dir, ConsoleLog), []byte(con), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := setupFailure(dir), "no NIC with MAC 02:00:00:00:00:01 (for data0) in /sys/class/net"; got != want {
		t.Errorf("setupFailure = %q, want %q", got, want)
	}
}
