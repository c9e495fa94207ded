//go:build linux && traffic

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"

	"github.com/linerate/linerate/cmd/linerate/internal/lab"
	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/internal/cluster/gossip"
	"github.com/linerate/linerate/internal/cluster/mtls"
	"github.com/linerate/linerate/internal/netns/nstest"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// The reliability suite (make reliability, bench/reliability.sh): real
// linerate agents in a lab's namespaces, killed, partitioned, fuzzed and
// signalled. Each test prints its figures as lines starting with
// "FIGURE " (the script copies them into docs/reliability.md);
// LINERATE_RELIABILITY_N sizes the repeated parts (the full pass: 20;
// make test's traffic pass: the small default).

// relN is how many times a repeated part runs: LINERATE_RELIABILITY_N,
// else def.
func relN(t *testing.T, def int) int {
	t.Helper()
	s := os.Getenv("LINERATE_RELIABILITY_N")
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		t.Fatalf("LINERATE_RELIABILITY_N=%q: want a positive count", s)
	}
	return n
}

// relFull reports whether this is the full pass (LINERATE_RELIABILITY_N set).
func relFull() bool { return os.Getenv("LINERATE_RELIABILITY_N") != "" }

// figure logs one figure line for the script to collect.
func figure(t *testing.T, format string, args ...any) {
	t.Helper()
	t.Logf("FIGURE %s: %s", t.Name(), fmt.Sprintf(format, args...))
}

// relLab is a lab whose agents run, each receiver tuning (and
// journaling) a fixture root's IRQ files, with a coordinator joined.
type relLab struct {
	t     *testing.T
	bin   string
	name  string
	lab   *lab.Lab
	c     *lab.Cluster
	opts  lab.AgentOptions
	cl    *coordinator.Cluster
	dial  coordinator.Dialer
	log   hclog.Logger
	roots map[string]func() string // receiver → its fixture IRQ files
}

// startRelLab brings up a lab of senders × receivers with agents; it is
// taken down (and checked to leave nothing behind) when the test ends.
func startRelLab(t *testing.T, prefix string, senders, receivers int) *relLab {
	t.Helper()
	return startRelLabRoots(t, prefix, senders, receivers, true)
}

// startRelLabRoots is startRelLab, the receivers' agents on fixture
// roots (virtioData0) or, with fixtures false, every agent on its real
// root: its namespace's sysfs, procfs and ruleset.
func startRelLabRoots(t *testing.T, prefix string, senders, receivers int, fixtures bool) *relLab {
	t.Helper()
	nstest.SkipUnlessRoot(t)
	r := &relLab{t: t, bin: Binary(t), name: fmt.Sprintf("%s%d", prefix, os.Getpid()%10000), roots: map[string]func() string{}}
	l, err := lab.Up(lab.Spec{Name: r.name, Senders: senders, Receivers: receivers, Mgmt: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.lab = l
	dir := filepath.Join(t.TempDir(), "lab")
	t.Cleanup(func() {
		if err := l.Down(); err != nil {
			t.Error(err)
		}
		assertNoLab(t, r.name, dir)
	})
	hostArgs := map[string][]string{}
	for _, h := range l.Receivers {
		if !fixtures {
			break
		}
		root, now := virtioData0(t)
		r.roots[h.Name] = now
		hostArgs[h.Name] = []string{"--root", root}
	}
	r.opts = lab.AgentOptions{Binary: r.bin, Dir: dir, LogLevel: "debug", HostArgs: hostArgs}
	if r.c, err = l.StartAgents(context.Background(), r.opts); err != nil {
		t.Fatal(err)
	}
	key, err := gossip.ReadKey(r.c.GossipKey)
	if err != nil {
		t.Fatal(err)
	}
	r.log = hclog.New(&hclog.LoggerOptions{Name: "coordinator", Level: hclog.Warn, Output: testWriter{t}})
	if r.cl, err = coordinator.JoinCluster(context.Background(), coordinator.ClusterConfig{Bind: r.c.Bind, Join: r.c.Join[:1], GossipKey: key, Logger: r.log}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.cl.Close() })
	r.waitAlive()
	r.dial = coordinator.TLSDialer(mtls.Options{Dir: r.c.TLSDir, Name: lab.CoordinatorCert})
	return r
}

func (r *relLab) waitAlive() {
	r.t.Helper()
	if _, err := r.cl.WaitAlive(context.Background(), len(r.lab.Hosts()), 20*time.Second); err != nil {
		r.t.Fatal(err)
	}
}

// runner is an in-process coordinator over the lab's cluster.
func (r *relLab) runner(onPhase func(coordinator.PhaseEvent)) *coordinator.Runner {
	return &coordinator.Runner{Cluster: r.cl, Dial: r.dial, Log: r.log, OnPhase: onPhase}
}

// runSucceeds runs a short count-based run until it succeeds, within
// 20 s (a restarted agent learns the others' tags by gossip first); it
// returns how long that took.
func (r *relLab) runSucceeds(senders, receivers []string, pattern coordinator.Pattern) time.Duration {
	r.t.Helper()
	var last string
	took, ok := waitFor(20*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := r.runner(nil).Run(ctx, coordinator.Spec{Senders: senders, Receivers: receivers, Pattern: pattern, Count: 500, Rate: 5000, Drain: 100 * time.Millisecond})
		if err != nil {
			last = err.Error()
			return false
		}
		last = res.Status + ": " + res.Error
		return res.Status == coordinator.StatusOK
	})
	if !ok {
		r.t.Fatalf("no run succeeded within %s: %s", took.Round(time.Millisecond), last)
	}
	return took
}

// hostNames are the lab's hosts by role.
func (r *relLab) hostNames() (senders, receivers []string) {
	for _, h := range r.lab.Senders {
		senders = append(senders, h.Name)
	}
	for _, h := range r.lab.Receivers {
		receivers = append(receivers, h.Name)
	}
	return senders, receivers
}

// conn is a mutual-TLS connection to host's agent (the lab's
// coordinator certificate), closed when the test ends.
func (r *relLab) conn(host string) *grpc.ClientConn {
	r.t.Helper()
	h := r.host(host)
	conn, err := r.dial(coordinator.Member{Name: host, Tags: gossip.Tags{GRPC: net.JoinHostPort(h.MgmtAddr().String(), strconv.Itoa(lab.GRPCPort))}})
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { conn.Close() })
	return conn
}

// client is an Agent client of host over conn.
func (r *relLab) client(host string) lineratev1.AgentClient {
	return lineratev1.NewAgentClient(r.conn(host))
}

func (r *relLab) host(name string) *lab.Host {
	for _, h := range r.lab.Hosts() {
		if h.Name == name {
			return h
		}
	}
	r.t.Fatalf("no host %s in lab %s", name, r.name)
	return nil
}

// free reports whether host's agent answers Describe with no lease.
func (r *relLab) free(c lineratev1.AgentClient) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	d, err := c.Describe(ctx, &lineratev1.DescribeRequest{})
	return err == nil && d.GetLease() == nil
}

// state is what a run may change on the hosts, as text to compare: each
// receiver's fixture IRQ files, XDP programs and pktgen devices in every
// host's namespace, the namespaces of the machine and what lies in
// /run/linerate.
func (r *relLab) state() string {
	var b strings.Builder
	var names []string
	for n := range r.roots {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		// The masks only: a fixture's smp_affinity_list does not follow
		// a write of smp_affinity as the kernel's does.
		var masks []string
		for _, l := range strings.Split(r.roots[n](), "\n") {
			if !strings.Contains(l, "smp_affinity_list") {
				masks = append(masks, l)
			}
		}
		fmt.Fprintf(&b, "irq %s: %s\n", n, strings.Join(masks, " "))
	}
	for _, h := range r.lab.Hosts() {
		fmt.Fprintf(&b, "ns %s: %s\n", h.Name, nsState(h))
	}
	b.WriteString(machineState(r.name))
	return b.String()
}

// nsState is the XDP programs and the pktgen devices in a host's namespace.
func nsState(h *lab.Host) string {
	out, err := h.NS.Command(context.Background(), "sh", "-c",
		"ip -d link show | grep -o 'prog/xdp id [0-9]*' ; cat /proc/net/pktgen/kpktgend_* 2>/dev/null | grep -i 'running\\|stopped' ; true").CombinedOutput()
	if err != nil {
		return "error: " + err.Error()
	}
	return strings.Join(strings.Fields(string(out)), " ")
}

// machineState is what of lab name the machine holds outside its
// hosts: its network namespaces and /run/linerate entries (other labs,
// other tests' included, are left out: they come and go meanwhile).
func machineState(name string) string {
	out, _ := exec.Command("ip", "netns", "list").Output()
	var ns []string
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) > 0 && strings.HasPrefix(f[0], lab.Prefix(name)) {
			ns = append(ns, f[0])
		}
	}
	sort.Strings(ns)
	runDir, _ := filepath.Glob(lab.DefaultDir(name) + "*")
	return fmt.Sprintf("netns: %s\n/run/linerate: %s\n", strings.Join(ns, " "), strings.Join(runDir, " "))
}

// waitFor polls cond every 50 ms until it holds or within passes; it
// returns how long it took and whether it held.
func waitFor(within time.Duration, cond func() bool) (time.Duration, bool) {
	start := time.Now()
	for {
		if cond() {
			return time.Since(start), true
		}
		if time.Since(start) > within {
			return time.Since(start), false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// proc is a linerate process of the suite whose output lines (stdout and
// stderr) are watched as they come.
type proc struct {
	cmd   *exec.Cmd
	mu    sync.Mutex
	lines []string
	more  chan struct{} // closed and replaced at every new line
	done  chan struct{} // closed when the process has ended
	err   error
}

// startProc starts bin with args; it is killed when the test ends.
func startProc(t *testing.T, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(bin, args...), more: make(chan struct{}), done: make(chan struct{})}
	pr, pw := io.Pipe()
	p.cmd.Stdout, p.cmd.Stderr = pw, pw
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			p.mu.Lock()
			p.lines = append(p.lines, sc.Text())
			close(p.more)
			p.more = make(chan struct{})
			p.mu.Unlock()
		}
	}()
	go func() {
		p.err = p.cmd.Wait()
		pw.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// waitLine waits until an output line contains s, within d.
func (p *proc) waitLine(s string, d time.Duration) bool {
	deadline := time.After(d)
	for i := 0; ; {
		p.mu.Lock()
		for ; i < len(p.lines); i++ {
			if strings.Contains(p.lines[i], s) {
				p.mu.Unlock()
				return true
			}
		}
		more := p.more
		p.mu.Unlock()
		select {
		case <-more:
		case <-p.done:
			return p.has(s)
		case <-deadline:
			return false
		}
	}
}

func (p *proc) has(s string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.lines {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

// output is the last n lines, for failures.
func (p *proc) output(n int) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.lines[max(0, len(p.lines)-n):], "\n")
}

// wait waits for the process to end within d; it returns its exit code
// (-1: still running after d, then killed).
func (p *proc) wait(d time.Duration) int {
	select {
	case <-p.done:
	case <-time.After(d):
		_ = p.cmd.Process.Kill()
		<-p.done
		return -1
	}
	return p.cmd.ProcessState.ExitCode()
}

// coordArgs are the flags that join a coordinator process to the lab.
func (r *relLab) coordArgs() []string {
	host, _, _ := net.SplitHostPort(r.c.Bind)
	return []string{"--join", r.c.Join[0], "--bind", net.JoinHostPort(host, "0"), "--gossip-key", r.c.GossipKey,
		"--tls-dir", r.c.TLSDir, "--results-dir", r.t.TempDir()}
}

// sending reports whether host's data0 transmits: its tx_packets counter
// moves within 300 ms.
func (r *relLab) sending(host string) bool {
	r.t.Helper()
	read := func() string {
		out, err := r.host(host).NS.Command(context.Background(), "cat", "/sys/class/net/data0/statistics/tx_packets").Output()
		if err != nil {
			r.t.Fatalf("%s: tx_packets: %v", host, err)
		}
		return strings.TrimSpace(string(out))
	}
	a := read()
	time.Sleep(300 * time.Millisecond)
	return read() != a
}

// tail is the last n lines of file (an agent's log), for failures.
func tail(file string, n int) string {
	b, err := os.ReadFile(file)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
