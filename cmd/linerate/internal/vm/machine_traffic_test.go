//go:build linux && traffic

package vm_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linerate/linerate/cmd/linerate/internal/vm"
	"github.com/linerate/linerate/cmd/linerate/internal/vmtest"
)

// labNetns is a network namespace of the test's own with the taps of
// its guests, deleted (taps and all) when the test ends.
type labNetns struct {
	t    *testing.T
	name string
}

var netnsSeq atomic.Int32

func newLabNetns(t *testing.T) *labNetns {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("vm: needs root for the network namespace and the taps the guests attach to")
	}
	n := &labNetns{t: t, name: fmt.Sprintf("lrvm-%d-%d", os.Getpid(), netnsSeq.Add(1))}
	n.ip("netns", "add", n.name)
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "del", n.name).CombinedOutput(); err != nil {
			t.Errorf("delete netns %s: %v: %s", n.name, err, out)
		}
	})
	return n
}

func (n *labNetns) ip(args ...string) string {
	n.t.Helper()
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		n.t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// tap creates a tap in the namespace, up; multiQueue for a data NIC of
// more than one queue pair; addr (if valid) on it.
func (n *labNetns) tap(name string, multiQueue bool, addr netip.Prefix) {
	n.t.Helper()
	args := []string{"-n", n.name, "tuntap", "add", "dev", name, "mode", "tap"}
	if multiQueue {
		args = append(args, "multi_queue")
	}
	n.ip(args...)
	if addr.IsValid() {
		n.ip("-n", n.name, "addr", "add", addr.String(), "dev", name)
	}
	n.ip("-n", n.name, "link", "set", name, "up")
}

// command runs qemu inside the namespace (ip netns exec execs it: qemu
// keeps the pid).
func (n *labNetns) command(ctx context.Context, name string, arg ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", n.name, name}, arg...)...)
}

// tickScript stands in for the agent: a line a second on the agent log,
// a last line when SIGTERM arrives.
const tickScript = `trap 'echo got-TERM; exit 0' TERM
i=0
while true; do echo "tick $i"; i=$((i+1)); sleep 1; done
`

func machine(t *testing.T, k *vm.Kernel, n *labNetns, idx int, layout vm.Layout) *vm.Machine {
	t.Helper()
	dataTap, mgmtTap := fmt.Sprintf("lrvmd%d", idx), fmt.Sprintf("lrvmm%d", idx)
	n.tap(dataTap, layout.Queues > 1, netip.MustParsePrefix(fmt.Sprintf("198.18.%d.1/24", 70+idx)))
	n.tap(mgmtTap, false, netip.MustParsePrefix(fmt.Sprintf("198.19.%d.1/24", 70+idx)))
	return &vm.Machine{
		Name:    fmt.Sprintf("lrvm%d", idx),
		Kernel:  k,
		Layout:  layout,
		Data:    vm.NIC{Tap: dataTap, MAC: net.HardwareAddr{0x02, 0x4c, 0x52, 0, byte(idx), 1}, Addr: netip.MustParsePrefix(fmt.Sprintf("198.18.%d.2/24", 70+idx)), Name: "data0"},
		Mgmt:    vm.NIC{Tap: mgmtTap, MAC: net.HardwareAddr{0x02, 0x4c, 0x52, 0, byte(idx), 2}, Addr: netip.MustParsePrefix(fmt.Sprintf("198.19.%d.2/24", 70+idx)), Name: "mgmt0"},
		Script:  tickScript,
		Dir:     t.TempDir(),
		Command: n.command,
		Log:     vmtest.TestLogger(t),
	}
}

// start boots m, kills it when the test ends, and returns once its shell
// answers, logging how long that took.
func start(t *testing.T, m *vm.Machine) *vm.Running {
	t.Helper()
	begin := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := m.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Kill(); <-r.Done() })
	started := time.Since(begin)
	ctx, cancel = context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if out, code, err := r.Exec(ctx, "echo ready"); err != nil || code != 0 || out != "ready\n" {
		con, _ := os.ReadFile(filepath.Join(m.Dir, vm.ConsoleLog))
		t.Fatalf("first Exec: %q, %d, %v; console:\n%s", out, code, err, con)
	}
	accel := r.Accel()
	t.Logf("machine %s (%d vCPUs, %d queues, %s): qemu running after %s, shell ready %s after Start",
		m.Name, m.Layout.VCPUs, m.Layout.Queues, accel, started.Round(time.Millisecond), time.Since(begin).Round(time.Millisecond))
	return r
}

func exec1(t *testing.T, r *vm.Running, cmd string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, code, err := r.Exec(ctx, cmd)
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 {
		t.Fatalf("guest: %s: exit %d: %s", cmd, code, out)
	}
	return out
}

func gone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err != nil || regexp.MustCompile(`\) [ZX] `).Match(b)
}

// TestMachineLifecycle boots a lab host guest (4 vCPUs on two nodes, a
// 4-queue data NIC on node 1) in a namespace of its own, checks what
// the lab relies on through Exec, reaches it over its management
// network, and stops it; then kills a second guest, and stops a third
// by its directory alone.
func TestMachineLifecycle(t *testing.T) {
	k := vmtest.SkipUnlessAvailable(t)
	n := newLabNetns(t)

	m := machine(t, k, n, 0, vm.Layout{VCPUs: 4, Queues: 4})
	r := start(t, m)
	if addr := exec1(t, r, "ip -o addr show dev data0"); !strings.Contains(addr, "198.18.70.2/24") {
		t.Errorf("data0 lacks its address: %s", addr)
	}
	if rx := strings.TrimSpace(exec1(t, r, "ls -d /sys/class/net/data0/queues/rx-* | wc -l")); rx != "4" {
		t.Errorf("data0 has %s rx queues, want 4", rx)
	}
	if node := strings.TrimSpace(exec1(t, r, "cat /sys/class/net/data0/device/numa_node 2>/dev/null || cat /sys/class/net/data0/device/../numa_node")); node != "1" {
		t.Errorf("data0's NUMA node %q, want 1", node)
	}
	if cpus := strings.TrimSpace(exec1(t, r, "cat /sys/devices/system/node/node1/cpulist")); cpus != "2-3" {
		t.Errorf("node 1 CPUs %q, want 2-3", cpus)
	}
	if backlog := strings.TrimSpace(exec1(t, r, "cat /proc/sys/net/core/netdev_max_backlog")); backlog != "10000" {
		t.Errorf("netdev_max_backlog %s, want 10000", backlog)
	}
	virtio := strings.TrimSpace(exec1(t, r, "basename $(readlink /sys/class/net/data0/device)"))
	irqs := exec1(t, r, "cat /proc/interrupts")
	var inputIRQ string
	for q := range 4 {
		for _, dir := range []string{"input", "output"} {
			re := regexp.MustCompile(`(?m)^\s*(\d+):.*\s` + regexp.QuoteMeta(fmt.Sprintf("%s-%s.%d", virtio, dir, q)) + `\s*$`)
			mm := re.FindStringSubmatch(irqs)
			if mm == nil {
				t.Errorf("/proc/interrupts has no %s-%s.%d vector:\n%s", virtio, dir, q, irqs)
				continue
			}
			if q == 0 && dir == "input" {
				inputIRQ = mm[1]
			}
		}
	}
	if inputIRQ != "" {
		got := strings.TrimSpace(exec1(t, r, "echo 3 >/proc/irq/"+inputIRQ+"/smp_affinity_list && cat /proc/irq/"+inputIRQ+"/smp_affinity_list"))
		if got != "3" {
			t.Errorf("IRQ %s smp_affinity_list after writing 3: %q", inputIRQ, got)
		}
	}
	if _, code, err := r.Exec(context.Background(), "exit 5"); err != nil || code != 5 {
		t.Errorf("Exec of exit 5: status %d, %v", code, err)
	}
	// The coordinator reaches the agent over the management network.
	// (busybox's ping: the host may have none.)
	if out, err := exec.Command("ip", "netns", "exec", n.name, k.Busybox, "ping", "-c", "3", "-W", "5", "198.19.70.2").CombinedOutput(); err != nil {
		t.Errorf("ping the guest's management address: %v\n%s", err, out)
	}
	// Exec from the directory alone, as a later process would.
	if host := strings.TrimSpace(mustExecDir(t, m.Dir, "hostname")); host != m.Name {
		t.Errorf("hostname %q, want %s", host, m.Name)
	}
	stopStart := time.Now()
	if err := r.Stop(30 * time.Second); err != nil {
		t.Errorf("Stop: %v", err)
	}
	select {
	case <-r.Done():
	default:
		t.Fatal("Stop returned with qemu running")
	}
	t.Logf("Stop took %s", time.Since(stopStart).Round(time.Millisecond))
	if err := r.Err(); err != nil {
		t.Errorf("qemu after Stop: %v", err)
	}
	if !gone(r.Pid()) {
		t.Errorf("qemu pid %d still there after Stop", r.Pid())
	}
	agentLog, _ := os.ReadFile(filepath.Join(m.Dir, vm.AgentLog))
	if !strings.Contains(string(agentLog), "tick 0\n") || !strings.HasSuffix(string(agentLog), "got-TERM\n") {
		t.Errorf("agent log does not show the script ticking, then SIGTERM:\n%s", agentLog)
	}
	if err := r.Stop(time.Second); err != nil {
		t.Errorf("second Stop: %v", err)
	}

	// A sender's qemu killed mid-run.
	m1 := machine(t, k, n, 1, vm.Layout{VCPUs: 2, Queues: 1})
	r1 := start(t, m1)
	if err := r1.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r1.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Done not closed 10s after Kill")
	}
	if r1.Err() == nil || !gone(r1.Pid()) {
		t.Errorf("after Kill: Err %v, pid %d gone %v", r1.Err(), r1.Pid(), gone(r1.Pid()))
	}

	// A leftover of a killed coordinator, stopped by its directory.
	m2 := machine(t, k, n, 2, vm.Layout{VCPUs: 2, Queues: 1})
	r2 := start(t, m2)
	if _, err := m2.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "already runs") {
		t.Errorf("a second Start in a running guest's directory: %v", err)
	}
	if err := vm.StopDir(m2.Dir, 30*time.Second); err != nil {
		t.Errorf("StopDir: %v", err)
	}
	if !gone(r2.Pid()) {
		t.Errorf("qemu pid %d still there after StopDir", r2.Pid())
	}
	if log2, _ := os.ReadFile(filepath.Join(m2.Dir, vm.AgentLog)); !strings.HasSuffix(string(log2), "got-TERM\n") {
		t.Errorf("StopDir did not stop the script through the shell; agent log:\n%s", log2)
	}
	if con, _ := os.ReadFile(filepath.Join(m2.Dir, vm.ConsoleLog)); !strings.Contains(string(con), "linerate-vm: ready") {
		t.Errorf("console lacks the ready line:\n%s", con)
	}
	if err := vm.StopDir(m2.Dir, time.Second); err != nil {
		t.Errorf("StopDir with nothing running: %v", err)
	}
}

// A guest whose setup fails says what failed on its console, powers
// off, and Err names it: here insmod kvm_intel, which refuses a CPU
// without VMX (TCG emulates none).
func TestMachineSetupFailure(t *testing.T) {
	k := vmtest.SkipUnlessAvailable(t)
	n := newLabNetns(t)
	m := machine(t, k, n, 3, vm.Layout{VCPUs: 2, Queues: 1})
	m.Accel = vm.AccelTCG
	m.Modules = []string{"kvm_intel"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := m.Start(ctx)
	if err != nil {
		// The guest may fail before Start saw it run; the error must say so.
		if !errors.Is(err, vm.ErrSetup) || !strings.Contains(err.Error(), "insmod kvm_intel") {
			t.Fatalf("Start: %v", err)
		}
		return
	}
	t.Cleanup(func() { _ = r.Kill(); <-r.Done() })
	select {
	case <-r.Done():
	case <-time.After(2 * time.Minute):
		t.Fatal("the guest did not power off after its setup failed")
	}
	err = r.Err()
	if !errors.Is(err, vm.ErrSetup) || !strings.Contains(err.Error(), "insmod kvm_intel") {
		con, _ := os.ReadFile(filepath.Join(m.Dir, vm.ConsoleLog))
		t.Fatalf("Err after a failed setup: %v; console:\n%s", err, con)
	}
	t.Logf("as reported: %v", err)
}

func mustExecDir(t *testing.T, dir, cmd string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, code, err := vm.Exec(ctx, dir, cmd)
	if err != nil || code != 0 {
		t.Fatalf("Exec %q in %s: %q, %d, %v", cmd, dir, out, code, err)
	}
	return out
}
