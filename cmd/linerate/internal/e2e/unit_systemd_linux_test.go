//go:build linux && traffic

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/linerate/linerate/cmd/linerate/internal/lab"
	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/internal/cluster/gossip"
	"github.com/linerate/linerate/internal/netns/nstest"
)

// unitCaps are the capabilities a unit's CapabilityBoundingSet may name,
// by their bit in /proc/PID/status's masks (linux/capability.h).
var unitCaps = map[string]int{
	"CAP_DAC_OVERRIDE": 1, "CAP_NET_ADMIN": 12, "CAP_NET_RAW": 13, "CAP_IPC_LOCK": 14, "CAP_SYS_MODULE": 16,
	"CAP_SYS_ADMIN": 21, "CAP_SYS_NICE": 23, "CAP_PERFMON": 38, "CAP_BPF": 39,
}

// container is a Debian root booted by systemd-nspawn with systemd as its
// PID 1.
type container struct {
	t      *testing.T
	cmd    *exec.Cmd
	log    string
	init   int // the container's PID 1, as this machine numbers it
	exited chan struct{}
}

// bootContainer boots root with systemd-nspawn in the network namespace
// netnsPath (a lab host's), with every capability, as a host's PID 1 has
// them (nspawn's default set lacks CAP_BPF, CAP_NET_ADMIN, CAP_PERFMON and
// CAP_IPC_LOCK, which the unit grants) and bpf(2), which nspawn's own
// seccomp filter refuses otherwise (EPERM to any process of the container,
// unit or not: the XDP receiver's map create failed so), and waits until
// its boot is done.
// The container is unregistered (--register=no --keep-unit: this
// machine's systemd, when it has one, is not asked) and halted at the
// test's end.
func bootContainer(t *testing.T, root, name, netnsPath string) *container {
	t.Helper()
	c := &container{t: t, log: filepath.Join(t.TempDir(), "nspawn.log"), exited: make(chan struct{})}
	logf, err := os.Create(c.log)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	c.cmd = exec.Command("systemd-nspawn", "--quiet", "-D", root, "-M", name, "--register=no", "--keep-unit", "--boot",
		"--capability=all", "--system-call-filter=bpf", "--network-namespace-path="+netnsPath, "--console=pipe")
	c.cmd.Stdout, c.cmd.Stderr = logf, logf
	// SIGTERM halts the container: it never outlives the test process.
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("systemd-nspawn: %v", err)
	}
	go func() { _ = c.cmd.Wait(); close(c.exited) }()
	t.Cleanup(c.halt)
	deadline := time.Now().Add(30 * time.Second)
	for c.init == 0 {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", c.cmd.Process.Pid, c.cmd.Process.Pid))
		if f := strings.Fields(string(b)); len(f) == 1 {
			c.init, _ = strconv.Atoi(f[0])
		}
		select {
		case <-c.exited:
			t.Fatalf("systemd-nspawn exited: %s", tail(c.log, 20))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no container init after 30 s: %s", tail(c.log, 20))
		}
	}
	// degraded: booted, some unit failed (listed below); a container
	// lacks what a few of a host's units want.
	// systemctl answers once systemd has exec'ed (before, "offline")
	// and listens on its private socket. A boot that never ends (a job
	// waiting forever) fails after 60 s.
	state, _ := c.run("timeout", "60", "systemctl", "is-system-running", "--wait")
	for (state == "offline" || strings.Contains(state, "Failed to connect to bus")) && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		state, _ = c.run("timeout", "60", "systemctl", "is-system-running", "--wait")
	}
	if state != "running" && state != "degraded" {
		jobs, _ := c.run("systemctl", "list-jobs", "--no-pager")
		failed, _ := c.run("systemctl", "--failed", "--no-legend")
		t.Fatalf("the container's systemd: %q\njobs:\n%s\nfailed units:\n%s\n%s", state, jobs, failed, tail(c.log, 20))
	}
	return c
}

// run runs a command in the container (all its namespaces) and returns
// its trimmed output.
func (c *container) run(args ...string) (string, error) {
	cmd := exec.Command("nsenter", append([]string{"-t", strconv.Itoa(c.init), "-a"}, args...)...)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C"}
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// must is run, failing the test on an error.
func (c *container) must(args ...string) string {
	c.t.Helper()
	out, err := c.run(args...)
	if err != nil {
		c.t.Fatalf("in the container: %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// halt powers the container off (SIGTERM to nspawn: systemd shuts down),
// killing it after 20 s.
func (c *container) halt() {
	select {
	case <-c.exited:
		return
	default:
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
	case <-time.After(20 * time.Second):
		c.t.Errorf("the container did not halt within 20 s: killed\n%s", tail(c.log, 20))
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
		<-c.exited
	}
}

// hostPid is this machine's pid of the container's process pid.
func (c *container) hostPid(pid int) int {
	c.t.Helper()
	ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", c.init))
	if err != nil {
		c.t.Fatal(err)
	}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		if l, _ := os.Readlink(d + "/ns/pid"); l != ns {
			continue
		}
		if f := statusField(d+"/status", "NSpid"); len(f) == 2 && f[1] == strconv.Itoa(pid) {
			p, _ := strconv.Atoi(f[0])
			return p
		}
	}
	c.t.Fatalf("no process of the container is its pid %d", pid)
	return 0
}

// statusField is the fields of a /proc/PID/status line.
func statusField(path, key string) []string {
	b, _ := os.ReadFile(path)
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == key {
			return strings.Fields(v)
		}
	}
	return nil
}

// mainPid is the unit's main pid in the container (0: none).
func (c *container) mainPid(unit string) int {
	c.t.Helper()
	p, err := strconv.Atoi(c.must("systemctl", "show", "-P", "MainPID", unit))
	if err != nil {
		c.t.Fatal(err)
	}
	return p
}

// The packaged agent under systemd: `make package`'s .deb installed in a
// copy of the package test's Debian chroot, booted with systemd-nspawn
// (systemd its PID 1) in the network namespace of a netns lab's receiver
// host r1 (data0 on the lab's switch, mgmt0 on its management network,
// 198.18.0.0/15), /etc/linerate laid out as a bootstrap bundle from the
// lab's certificates and gossip key, then `systemctl start
// linerate-agent`. It shows that the agent runs under the unit's sandbox
// (its capability sets the unit's, no new privileges, a seccomp filter,
// /usr read-only and /var/lib/linerate its writable state); that it joins
// the lab's cluster, `linerate members` lists it serving and a `linerate
// run` into its XDP receiver balances to the packet; that systemd
// restarts it after a SIGKILL (Restart=on-failure) and it joins again;
// and that `systemctl stop` ends it with SIGTERM, cleanly, well within
// TimeoutStopSec.
func TestUnitUnderSystemd(t *testing.T) {
	nstest.SkipUnlessRoot(t)
	requireTool(t, "systemd-nspawn", "make package-deps installs Debian's systemd-container")
	requireTool(t, "debootstrap", "make package-deps installs Debian's debootstrap")
	requireTool(t, "make", "Debian's make")
	start := time.Now()
	bin := Binary(t)
	s := unitSettings(t, unitFile)
	var wantCaps uint64
	for _, c := range strings.Fields(one(t, s, "CapabilityBoundingSet")) {
		bit, ok := unitCaps[c]
		if !ok {
			t.Fatalf("the unit's CapabilityBoundingSet names %s, which this test does not know", c)
		}
		wantCaps |= 1 << bit
	}
	stopTimeout, err := time.ParseDuration(one(t, s, "TimeoutStopSec"))
	if err != nil {
		t.Fatal(err)
	}

	// Cleanups run last first: the container halts (its own cleanup),
	// then the lab goes, then nothing may stay mounted in its root.
	root := debianChroot(t)
	t.Cleanup(func() { unmountUnder(t, root) })
	installPackage(t, root, makePackage(t))

	name := fmt.Sprintf("us%d", os.Getpid()%10000)
	l, err := lab.Up(lab.Spec{Name: name, Senders: 1, Receivers: 1, Mgmt: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "lab")
	t.Cleanup(func() {
		if err := l.StopAgents(10 * time.Second); err != nil {
			t.Error(err)
		}
		if err := l.Down(); err != nil {
			t.Error(err)
		}
		assertNoLab(t, name, dir)
	})
	cl, err := l.StartAgents(context.Background(), lab.AgentOptions{Binary: bin, Dir: dir, LogLevel: "warn", Elsewhere: []string{"r1"}})
	if err != nil {
		t.Fatal(err)
	}
	r1 := l.Receivers[0]

	// /etc/linerate as r1's bootstrap bundle lays it out (tls/ with its
	// certificate and key, ca.crt and gossip.key; agent.yaml naming them
	// and its seed), with what only the host knows added: role,
	// interface, addresses. The state directory is the agent's default,
	// /var/lib/linerate, the unit's StateDirectory.
	etc := filepath.Join(root, "etc/linerate")
	if err := os.MkdirAll(filepath.Join(etc, "tls"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"r1.crt", "r1.key", "ca.crt", gossip.KeyFile} {
		b, err := os.ReadFile(filepath.Join(cl.TLSDir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(etc, "tls", f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mgmt := r1.MgmtAddr().String()
	conf := fmt.Sprintf("name: r1\ntls-dir: /etc/linerate/tls\njoin: [%s]\nrole: receiver\niface: data0\nbind: %s\ngrpc: %s\n",
		cl.Join[0], net.JoinHostPort(mgmt, strconv.Itoa(lab.GossipPort)), net.JoinHostPort(mgmt, strconv.Itoa(lab.GRPCPort)))
	if err := os.WriteFile(filepath.Join(etc, "agent.yaml"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}

	booted := time.Now()
	c := bootContainer(t, root, name, "/run/netns/"+r1.NS.Name)
	t.Logf("container booted in %s", time.Since(booted).Round(time.Millisecond))
	// nspawn given a network namespace leaves the container the sysfs of
	// this machine's namespace (its /sys/class/net lists eth0): the
	// container's net directories become those of its own namespace, as
	// a host's are, so the agent finds data0's MAC, speed and queues.
	c.must("sh", "-ec", "mkdir -p /run/netsys; mount -t sysfs sysfs /run/netsys; "+
		"mount --bind /run/netsys/class/net /sys/class/net; mount --bind /run/netsys/devices/virtual/net /sys/devices/virtual/net")
	if got := c.must("cat", "/sys/class/net/data0/address"); got != r1.Data.MAC.String() {
		t.Fatalf("the container's data0 has MAC %s, the lab's r1 %s", got, r1.Data.MAC)
	}
	c.must("systemctl", "start", "linerate-agent")

	members := func(t *testing.T) []coordinator.Member {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "members", "--config", "", "--tls-dir", cl.TLSDir, "--join", cl.Join[0], "--bind", cl.Bind,
			"--json", "--wait", "2", "--timeout", "30s", "--log-level", "warn")
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			journal, _ := c.run("journalctl", "-u", "linerate-agent", "--no-pager", "-n", "20")
			t.Fatalf("linerate members: %v\n%s\nthe agent's journal:\n%s", err, stderr.String(), journal)
		}
		var ms []coordinator.Member
		if err := json.Unmarshal([]byte(stdout.String()), &ms); err != nil {
			t.Fatalf("members JSON: %v\n%s", err, stdout.String())
		}
		return ms
	}
	r1Serving := func(t *testing.T) {
		t.Helper()
		ms := members(t)
		for _, m := range ms {
			if m.Name == "r1" && m.Status == "alive" && m.Health == "serving" && m.Role == "receiver" {
				return
			}
		}
		t.Fatalf("members does not list r1 alive and serving as a receiver: %+v", ms)
	}
	agentPid := func(t *testing.T) (inContainer, onHost int) {
		t.Helper()
		p := c.mainPid("linerate-agent")
		if p == 0 {
			out, _ := c.run("systemctl", "status", "--no-pager", "linerate-agent")
			t.Fatalf("linerate-agent has no main pid:\n%s", out)
		}
		return p, c.hostPid(p)
	}

	t.Run("sandbox", func(t *testing.T) {
		_, pid := agentPid(t)
		status := fmt.Sprintf("/proc/%d/status", pid)
		if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); strings.TrimSpace(string(comm)) != "linerate" {
			t.Fatalf("the unit's main pid %d is %q, not linerate", pid, comm)
		}
		for _, set := range []string{"CapBnd", "CapEff", "CapPrm"} {
			f := statusField(status, set)
			got, err := strconv.ParseUint(strings.Join(f, ""), 16, 64)
			if err != nil || got != wantCaps {
				t.Errorf("%s %v (%v), want the unit's %016x", set, f, err, wantCaps)
			}
		}
		for _, set := range []string{"CapInh", "CapAmb"} {
			if f := statusField(status, set); strings.Join(f, "") != "0000000000000000" {
				t.Errorf("%s %v, want none", set, f)
			}
		}
		if f := statusField(status, "NoNewPrivs"); strings.Join(f, "") != "1" {
			t.Errorf("NoNewPrivs %v, want 1 (NoNewPrivileges=yes)", f)
		}
		// 2: a seccomp filter, where RestrictAddressFamilies,
		// SystemCallArchitectures, MemoryDenyWriteExecute, LockPersonality
		// and the Restrict*/Protect* system call lists are enforced.
		if f := statusField(status, "Seccomp"); strings.Join(f, "") != "2" {
			t.Errorf("Seccomp %v, want 2 (filter)", f)
		}
		// The agent's own view of the file system (its mount namespace):
		// /usr read-only (ProtectSystem=strict), its state directory
		// writable, holding its admin socket.
		in := func(args ...string) (string, error) {
			out, err := exec.Command("nsenter", append([]string{"-t", strconv.Itoa(pid), "-m"}, args...)...).CombinedOutput()
			return strings.TrimSpace(string(out)), err
		}
		if out, err := in("touch", "/usr/lib/linerate-probe"); err == nil || !strings.Contains(out, "Read-only file system") {
			t.Errorf("the agent can write /usr (ProtectSystem=strict): %v %s", err, out)
		}
		if out, err := in("touch", "/etc/linerate/probe"); err == nil || !strings.Contains(out, "Read-only file system") {
			t.Errorf("the agent can write /etc/linerate: %v %s", err, out)
		}
		if out, err := in("sh", "-c", "touch /var/lib/linerate/probe && rm /var/lib/linerate/probe && test -S /var/lib/linerate/admin/r1.sock && stat -c %a /var/lib/linerate"); err != nil || out != "700" {
			t.Errorf("/var/lib/linerate is not the agent's writable state directory (mode 0700) holding its admin socket: %v %s", err, out)
		}
		// ProtectHome=yes: /root (which holds the chroot's .bashrc) and
		// /home empty and mode 0 (nsenter's full root still lists them).
		if out, err := in("sh", "-c", "stat -c %a /home /root; ls -A /root /home"); err != nil || out != "0\n0\n/home:\n\n/root:" && out != "0\n0\n/root:\n\n/home:" {
			t.Errorf("the agent sees /home and /root (ProtectHome=yes): %v %q", err, out)
		}
	})
	if t.Failed() {
		t.FailNow()
	}

	run := func(t *testing.T) {
		t.Helper()
		const count = 5000
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "run", "--config", "", "--tls-dir", cl.TLSDir, "--join", cl.Join[0], "--bind", cl.Bind,
			"--senders", "s1", "--receivers", "r1", "--count", strconv.Itoa(count), "--backend", "afpacket", "--method", "xdp",
			"--drain", "200ms", "--json", "--log-level", "warn", "--results-dir", t.TempDir())
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var res coordinator.Result
		if jerr := json.Unmarshal([]byte(stdout.String()), &res); jerr != nil {
			t.Fatalf("linerate run: %v, result JSON %v\n%s\n%s", err, jerr, stdout.String(), stderr.String())
		}
		if err != nil || res.Status != coordinator.StatusOK || len(res.Flows) != 1 || res.Flows[0].Sent != count || res.Flows[0].Received != count {
			journal, _ := c.run("journalctl", "-u", "linerate-agent", "--no-pager", "-n", "20")
			t.Fatalf("linerate run afpacket into r1's xdp receiver: %v, status %s %s, flows %+v, want %d sent and received\n%s\nthe agent's journal:\n%s",
				err, res.Status, res.Error, res.Flows, count, stderr.String(), journal)
		}
	}
	t.Run("joins and receives", func(t *testing.T) {
		r1Serving(t)
		run(t)
	})

	t.Run("restarted on failure", func(t *testing.T) {
		before, pid := agentPid(t)
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		killed := time.Now()
		var after int
		for after = c.mainPid("linerate-agent"); after == 0 || after == before; after = c.mainPid("linerate-agent") {
			if time.Since(killed) > 30*time.Second {
				t.Fatalf("systemd did not restart the agent within 30 s of its SIGKILL (main pid %d)", after)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if n := c.must("systemctl", "show", "-P", "NRestarts", "linerate-agent"); n != "1" {
			t.Errorf("NRestarts %s, want 1", n)
		}
		t.Logf("restarted %s after the SIGKILL (pid %d, was %d)", time.Since(killed).Round(100*time.Millisecond), after, before)
		r1Serving(t)
		run(t)
	})

	t.Run("stopped cleanly", func(t *testing.T) {
		_, pid := agentPid(t)
		stopping := time.Now()
		c.must("systemctl", "stop", "linerate-agent")
		took := time.Since(stopping)
		if took >= stopTimeout {
			t.Errorf("systemctl stop took %s, TimeoutStopSec %s", took, stopTimeout)
		}
		if err := syscall.Kill(pid, 0); err == nil {
			t.Errorf("the agent (pid %d) still runs after systemctl stop", pid)
		}
		// Exited 0 (a main process killed by SIGTERM is a success to
		// systemd too: the journal check below tells them apart).
		for _, p := range []string{"ActiveState=inactive", "Result=success", "ExecMainStatus=0"} {
			k, want, _ := strings.Cut(p, "=")
			if got := c.must("systemctl", "show", "-P", k, "linerate-agent"); got != want {
				t.Errorf("after systemctl stop, %s=%s, want %s", k, got, want)
			}
		}
		// The journal since the restarted agent's start: the agent's own
		// word that SIGTERM reached it, then systemd's that it ended well.
		journal := c.must("journalctl", "--no-pager", "-o", "cat", "-u", "linerate-agent")
		last := journal[max(0, strings.LastIndex(journal, "Started linerate-agent")):]
		i := strings.Index(last, "signal received: shutting down")
		if j := strings.Index(last, "Deactivated successfully"); i < 0 || j < i || strings.Contains(last, "code=killed") {
			t.Errorf("the stopped agent's journal (since its last start) does not say it shut down on SIGTERM, then was deactivated successfully:\n%s", last)
		}
		t.Logf("systemctl stop: %s (TimeoutStopSec %s)", took.Round(time.Millisecond), stopTimeout)
	})

	c.halt()
	t.Logf("TestUnitUnderSystemd: %s", time.Since(start).Round(100*time.Millisecond))
}
