//go:build linux && traffic

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/coordinator/results"
	"github.com/linerate/linerate/internal/fsfixture"
	"github.com/linerate/linerate/internal/lab"
	"github.com/linerate/linerate/internal/mtls"
	"github.com/linerate/linerate/internal/netns/nstest"
)

// labResult is `linerate lab run --json`.
type labResult struct {
	coordinator.Result
	Lab lab.Truth `json:"lab"`
}

// labRun runs `linerate lab run ARGS --json` and checks that the lab left
// nothing behind.
func labRun(t *testing.T, bin, name string, args ...string) *labResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	cmd := exec.CommandContext(ctx, bin, append([]string{"lab", "run", "--name", name, "--json", "--log-level", "warn", "--results-dir", dir}, args...)...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	out := stdout.String()
	if slices.Contains(args, "--json-stream") {
		out = checkStream(t, out)
	}
	var res labResult
	if jerr := json.Unmarshal([]byte(out), &res); jerr != nil {
		t.Fatalf("lab run %v: %v; JSON: %v\nstdout:\n%s\nstderr:\n%s", args, err, jerr, stdout.String(), stderr.String())
	}
	if err != nil && res.Status == coordinator.StatusOK {
		t.Fatalf("lab run %v: exit %v with status ok\n%s", args, err, stderr.String())
	}
	if res.Status != coordinator.StatusOK {
		t.Fatalf("lab run %v: %s: %s\n%s", args, res.Status, res.Error, stderr.String())
	}
	assertNoLab(t, name, lab.DefaultDir(name))
	// The run is on record.
	stored, err := results.NewStore(dir).Load(res.RunID)
	if err != nil || stored.Kind != results.KindRun || stored.Run == nil || len(stored.Run.Flows) != len(res.Flows) || stored.Lab == nil {
		t.Errorf("stored run %s: %v %+v", res.RunID, err, stored)
	}
	return &res
}

// checkStream checks `--json-stream` output: one JSON object per line,
// every phase of a run in order, live samples of every agent, and the
// result last; it returns the result line.
func checkStream(t *testing.T, out string) string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var phases []string
	agents := map[string]bool{}
	for i, l := range lines {
		var ev struct {
			Event, Phase, Agent string
		}
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", i+1, err, l)
		}
		switch ev.Event {
		case "phase":
			phases = append(phases, ev.Phase)
		case "sample":
			agents[ev.Agent] = true
		case "result":
			if i != len(lines)-1 {
				t.Errorf("result on line %d of %d", i+1, len(lines))
			}
		default:
			t.Errorf("line %d: event %q", i+1, ev.Event)
		}
	}
	want := []string{"discover", "describe", "lease", "tune", "arm", "configure", "start", "run", "drain", "collect", "reconcile", "restore"}
	if !slices.Equal(phases, want) {
		t.Errorf("phases %v, want %v", phases, want)
	}
	if len(agents) == 0 {
		t.Error("no live samples")
	}
	return lines[len(lines)-1]
}

// assertNoLab: no namespace, management link, directory (dir) or agent
// process of the lab is left.
func assertNoLab(t *testing.T, name, dir string) {
	t.Helper()
	left, _ := lab.Leftovers()
	for _, n := range left {
		if strings.HasPrefix(n, lab.Prefix(name)) {
			t.Errorf("namespace %s left behind", n)
		}
	}
	if _, err := os.Stat("/sys/class/net/" + lab.MgmtLinkName(name)); err == nil {
		t.Errorf("management link %s left behind", lab.MgmtLinkName(name))
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("lab directory %s left behind", dir)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, _ := os.ReadFile(p)
		if strings.Contains(string(b), dir+"/") {
			t.Errorf("process %s left behind: %q", p, strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
}

// exact: every flow received exactly what was sent.
func exact(t *testing.T, res *labResult, flows int, sent uint64) {
	t.Helper()
	if len(res.Flows) != flows {
		t.Fatalf("%d flows, want %d: %+v", len(res.Flows), flows, res.Flows)
	}
	for _, f := range res.Flows {
		if f.Sent != sent || f.Received != f.Sent || f.Lost != 0 || f.Duplicates != 0 || f.LossRatio != 0 {
			t.Errorf("flow %s→%s: sent %d (want %d) received %d lost %d dups %d", f.Sender, f.Receiver, f.Sent, sent, f.Received, f.Lost, f.Duplicates)
		}
	}
	if d := res.Lab.Drops(); d != 0 {
		t.Errorf("the switch dropped %d frames: %+v", d, res.Lab.SwitchPorts)
	}
}

// TestLabRun drives `linerate lab run` end to end: agent processes found
// by serf, driven over mutual TLS, reconciled against the switch's own
// counts.
func TestLabRun(t *testing.T) {
	nstest.SkipUnlessRoot(t)
	bin := buildBinary(t)
	id := os.Getpid() % 10000

	t.Run("pairwise-2x2", func(t *testing.T) {
		res := labRun(t, bin, fmt.Sprintf("p%d", id), "--senders", "2", "--receivers", "2", "--count", "20000")
		exact(t, res, 2, 20000)
		if len(res.Hosts) != 4 || res.StartSkewUS <= 0 {
			t.Errorf("hosts %d, start skew %v µs", len(res.Hosts), res.StartSkewUS)
		}
		for _, h := range res.Hosts {
			if h.Kernel == "" || h.Iface != "data0" || (h.Role == "sender" && h.Backend == "") || (h.Role == "receiver" && h.Method == "") {
				t.Errorf("host %+v", h)
			}
		}
	})
	t.Run("fan-in-3to1", func(t *testing.T) {
		res := labRun(t, bin, fmt.Sprintf("f%d", id), "--senders", "3", "--receivers", "1", "--pattern", "fan-in", "--count", "15000", "--json-stream")
		exact(t, res, 3, 15000)
	})
	t.Run("mesh-2x2", func(t *testing.T) {
		// Paced: four flows at full speed over two CPUs overflow the veth
		// rings, which is loss, not what this test is about.
		res := labRun(t, bin, fmt.Sprintf("m%d", id), "--pattern", "mesh", "--count", "4000", "--rate", "20000")
		exact(t, res, 4, 4000)
	})
	t.Run("loss-every-1000", func(t *testing.T) {
		res := labRun(t, bin, fmt.Sprintf("l%d", id), "--loss-every", "1000", "--count", "12500", "--backend", "afpacket")
		var lost uint64
		for _, f := range res.Flows {
			lost += f.Lost
			if f.Sent != 12500 || f.Lost != 12 || f.LostNetwork != f.Lost || f.LostSenderHost != 0 || f.LostReceiverHost != 0 {
				t.Errorf("flow %s→%s: sent %d lost %d (network %d, sender host %d, receiver host %d), want 12 lost in the network",
					f.Sender, f.Receiver, f.Sent, f.Lost, f.LostNetwork, f.LostSenderHost, f.LostReceiverHost)
			}
			// The port drops every 1000th test packet of its one stream:
			// those sequences, and only those, are missing.
			var want [][2]uint32
			for seq := uint32(1000); seq <= 12000; seq += 1000 {
				want = append(want, [2]uint32{seq, seq})
			}
			for _, s := range f.StreamDetail {
				if !slices.Equal(s.MissingRanges, want) || s.Missing != 12 {
					t.Errorf("stream %s→%s: missing %d %v, want %v", s.Src, s.Dst, s.Missing, s.MissingRanges, want)
				}
			}
		}
		if d := res.Lab.Drops(); lost != d || d != 24 {
			t.Errorf("lost %d, the switch dropped %d (want 24 both)", lost, d)
		}
	})
	t.Run("loss-random", func(t *testing.T) {
		res := labRun(t, bin, fmt.Sprintf("r%d", id), "--senders", "1", "--receivers", "1", "--loss", "2", "--count", "20000", "--backend", "afpacket")
		f := res.Flows[0]
		// 2 % of 20 000: 400 expected, binomial σ ≈ 20.
		if f.Lost < 250 || f.Lost > 550 || f.Lost != res.Lab.Drops() || f.LostNetwork != f.Lost {
			t.Errorf("lost %d (network %d), switch dropped %d; want ≈ 400, equal, all in the network", f.Lost, f.LostNetwork, res.Lab.Drops())
		}
	})
	// 50 Mbit/s of 60-byte frames (tbf counts the frame without FCS) is
	// 104 167 pps. The veth path pushes back: a socket sender and an XDP
	// live-frame sender behind it are both slowed, not dropped.
	for _, backend := range []string{"afpacket", "xdp"} {
		t.Run("shaped-"+backend, func(t *testing.T) {
			res := labRun(t, bin, fmt.Sprintf("h%d", id), "--senders", "1", "--receivers", "1", "--shape", "50mbit", "--backend", backend, "--duration", "2s")
			f := res.Flows[0]
			want := 50e6 / 8 / 60
			if f.PPS < 0.9*want || f.PPS > 1.05*want {
				t.Errorf("achieved %.0f pps behind a %.0f pps shaper", f.PPS, want)
			}
			if f.Received+f.Lost-f.Duplicates != f.Sent || f.Lost != res.Lab.Drops() {
				t.Errorf("books: sent %d received %d lost %d, switch drops %d", f.Sent, f.Received, f.Lost, res.Lab.Drops())
			}
		})
	}
}

// virtioData0 unpacks a fixture host whose data0 is a 4-queue virtio NIC
// on node 1, so that an agent given --root tunes (and journals) IRQ
// affinities there while its traffic uses the lab's real data0.
func virtioData0(t *testing.T) (dir string, snapshot func() string) {
	t.Helper()
	raw, err := os.ReadFile("../../topology/testdata/virtio-mq.tree")
	if err != nil {
		t.Fatal(err)
	}
	a, err := fsfixture.Parse([]byte(strings.ReplaceAll(string(raw), "eth0", "data0")))
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	if err := a.Unpack(dir); err != nil {
		t.Fatal(err)
	}
	return dir, func() string {
		var b strings.Builder
		files, _ := filepath.Glob(filepath.Join(dir, "proc/irq/*/smp_affinity*"))
		for _, f := range files {
			v, _ := os.ReadFile(f)
			fmt.Fprintf(&b, "%s=%s", strings.TrimPrefix(f, dir), v)
		}
		return b.String()
	}
}

// TestLabAgentKilled: an agent SIGKILLed mid-run fails the run within
// 10 s naming it; the other hosts are released and restored; the killed
// host's journal is restored when its agent starts again. Also: a client
// without a valid certificate, and a gossip member with the wrong key, get
// nothing.
func TestLabAgentKilled(t *testing.T) {
	nstest.SkipUnlessRoot(t)
	bin := buildBinary(t)
	name := fmt.Sprintf("k%d", os.Getpid()%10000)
	l, err := lab.Up(lab.Spec{Name: name, Senders: 2, Receivers: 2, Mgmt: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "lab") // the agents' directory, not DefaultDir
	defer func() {
		if err := l.Down(); err != nil {
			t.Error(err)
		}
		assertNoLab(t, name, dir)
	}()
	r1Root, r1Now := virtioData0(t)
	r2Root, r2Now := virtioData0(t)
	r1Before, r2Before := r1Now(), r2Now()
	opts := lab.AgentOptions{Binary: bin, Dir: dir, LogLevel: "debug",
		HostArgs: map[string][]string{"r1": {"--root", r1Root}, "r2": {"--root", r2Root}}}
	c, err := l.StartAgents(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	key, err := readGossipKey(c.GossipKey)
	if err != nil {
		t.Fatal(err)
	}
	log := hclog.New(&hclog.LoggerOptions{Name: "coordinator", Level: hclog.Warn, Output: testWriter{t}})
	cl, err := coordinator.JoinCluster(coordinator.ClusterConfig{Bind: c.Bind, Join: c.Join[:1], GossipKey: key, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := cl.WaitAlive(context.Background(), 4, 15*time.Second); err != nil {
		t.Fatal(err)
	}

	t.Run("refusals", func(t *testing.T) {
		// A coordinator certificate from another CA: the health check
		// (and every call) is refused.
		other := t.TempDir()
		if _, _, err := mtls.Init(other, mtls.CAOptions{}, false); err != nil {
			t.Fatal(err)
		}
		if _, _, err := mtls.Issue(other, mtls.LeafOptions{Name: lab.CoordinatorCert, Role: mtls.RoleCoordinator}, false); err != nil {
			t.Fatal(err)
		}
		for _, m := range coordinator.Check(context.Background(), cl.Members(), coordinator.TLSDialer(mtls.Options{Dir: other, Name: lab.CoordinatorCert}), 3*time.Second) {
			if m.Health == "serving" {
				t.Errorf("%s served a coordinator from another CA", m.Name)
			}
		}
		for _, m := range coordinator.Check(context.Background(), cl.Members(), coordinator.TLSDialer(mtls.Options{Dir: c.TLSDir, Name: lab.CoordinatorCert}), 3*time.Second) {
			if m.Health != "serving" {
				t.Errorf("%s: %s with the lab's certificate", m.Name, m.Health)
			}
		}
		wrong := make([]byte, 32)
		if _, err := coordinator.JoinCluster(coordinator.ClusterConfig{Bind: c.Bind, Join: c.Join[:1], GossipKey: wrong, Logger: log}); err == nil {
			t.Error("a member with the wrong gossip key joined")
		}
		if _, err := coordinator.JoinCluster(coordinator.ClusterConfig{Bind: c.Bind, Join: c.Join[:1], Logger: log}); err == nil {
			t.Error("a member without the gossip key joined")
		}
	})

	var mu sync.Mutex
	var killedAt time.Time
	var once sync.Once
	killed := make(chan struct{})
	kill := func() {
		time.Sleep(500 * time.Millisecond)
		mu.Lock()
		killedAt = time.Now()
		mu.Unlock()
		_ = l.Agent("r2").Cmd.Process.Signal(syscall.SIGKILL)
		close(killed)
	}
	r := &coordinator.Runner{Cluster: cl, Dial: coordinator.TLSDialer(mtls.Options{Dir: c.TLSDir, Name: lab.CoordinatorCert}), Log: log,
		OnPhase: func(p coordinator.PhaseEvent) {
			if p.Phase != coordinator.PhaseRun {
				return
			}
			once.Do(func() { go kill() })
		}}
	res, err := r.Run(context.Background(), coordinator.Spec{
		Senders: []string{"s1", "s2"}, Receivers: []string{"r1", "r2"}, Duration: time.Minute, Rate: 5000, Drain: 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	<-killed
	mu.Lock()
	took := time.Since(killedAt)
	mu.Unlock()
	if res.Status != coordinator.StatusFailed || !strings.Contains(res.Error, "agent r2") || res.FailedPhase != coordinator.PhaseRun {
		t.Fatalf("status %s, phase %s, error %q", res.Status, res.FailedPhase, res.Error)
	}
	if took > 10*time.Second {
		t.Errorf("the run ended %s after the kill", took)
	}
	t.Logf("failed %s after the kill: %s", took.Round(time.Millisecond), res.Error)
	for _, h := range res.Hosts {
		switch h.Name {
		case "r1":
			if h.Tuned != "restored" || len(h.IRQMap) != 8 { // 4 queues, rx and tx vectors
				t.Errorf("r1: tuning %q, irq map %v", h.Tuned, h.IRQMap)
			}
		case "r2":
			if !strings.Contains(strings.Join(h.Warnings, "\n"), "release lease") {
				t.Errorf("r2's release should have failed: %v", h.Warnings)
			}
		}
	}
	if r1Now() != r1Before {
		t.Errorf("r1 not restored:\nbefore %s\nafter  %s", r1Before, r1Now())
	}
	if r2Now() == r2Before {
		t.Error("r2 was never tuned (the kill proves nothing)")
	}
	// The other agents are free again: a new run leases them.
	for _, m := range []string{"s1", "s2", "r1"} {
		if l.Agent(m).Exited() {
			t.Errorf("agent %s exited", m)
		}
	}
	if _, err := l.Restart(context.Background(), "r2", opts); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for r2Now() != r2Before && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if r2Now() != r2Before {
		t.Errorf("r2's journal not restored when its agent restarted:\nbefore %s\nafter  %s", r2Before, r2Now())
	}
	if _, err := cl.WaitAlive(context.Background(), 4, 15*time.Second); err != nil {
		t.Fatal(err)
	}
	res, err = r.Run(context.Background(), coordinator.Spec{Senders: []string{"s1", "s2"}, Receivers: []string{"r1", "r2"}, Count: 2000, Drain: 100 * time.Millisecond})
	if err != nil || res.Status != coordinator.StatusOK {
		t.Fatalf("run after the restart: %v %s %s", err, res.Status, res.Error)
	}
	for _, f := range res.Flows {
		if f.Sent != 2000 || f.Received != 2000 {
			t.Errorf("after the restart: flow %s→%s sent %d received %d", f.Sender, f.Receiver, f.Sent, f.Received)
		}
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// startLabUp runs `linerate lab up` and returns once it printed how to
// reach the agents (its stdout lines).
func startLabUp(t *testing.T, bin, name string) (*exec.Cmd, []string) {
	t.Helper()
	cmd := exec.Command(bin, "lab", "up", "--name", name, "--senders", "1", "--receivers", "1", "--log-level", "warn")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		buf := make([]byte, 64<<10)
		var acc string
		for {
			n, err := stdout.Read(buf)
			acc += string(buf[:n])
			for {
				i := strings.IndexByte(acc, '\n')
				if i < 0 {
					break
				}
				lines <- acc[:i]
				acc = acc[i+1:]
			}
			if err != nil {
				close(lines)
				return
			}
		}
	}()
	var out []string
	timeout := time.After(90 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("lab up ended: %v\n%s\n%s", cmd.Wait(), strings.Join(out, "\n"), stderr.String())
			}
			out = append(out, l)
			if strings.HasPrefix(l, "Ctrl-C removes the lab") {
				go func() {
					for range lines {
					}
				}()
				return cmd, out
			}
		case <-timeout:
			cmd.Process.Kill()
			t.Fatalf("lab up not ready:\n%s\n%s", strings.Join(out, "\n"), stderr.String())
		}
	}
}

// TestLabUpMembersDown: `lab up` keeps a lab whose agents `linerate
// members` lists (with the flags lab up printed) until Ctrl-C removes it;
// a `lab up` killed outright leaves a lab that `lab down` removes.
func TestLabUpMembersDown(t *testing.T) {
	nstest.SkipUnlessRoot(t)
	bin := buildBinary(t)
	name := fmt.Sprintf("u%d", os.Getpid()%10000)
	cmd, out := startLabUp(t, bin, name)
	var flags []string
	for _, l := range out {
		if f, ok := strings.CutPrefix(strings.TrimSpace(l), "linerate members "); ok {
			flags = strings.Fields(f)
		}
	}
	if flags == nil {
		t.Fatalf("lab up printed no members command:\n%s", strings.Join(out, "\n"))
	}
	mo, err := exec.Command(bin, append([]string{"members", "--json", "--wait", "2", "--log-level", "warn"}, flags...)...).Output()
	if err != nil {
		t.Fatalf("members: %v", err)
	}
	var ms []coordinator.Member
	if err := json.Unmarshal(mo, &ms); err != nil {
		t.Fatalf("members JSON: %v\n%s", err, mo)
	}
	if len(ms) != 2 || ms[0].Name != "r1" || ms[0].Role != "receiver" || ms[1].Name != "s1" || ms[1].Health != "serving" || ms[1].Iface != "data0" {
		t.Errorf("members: %+v", ms)
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil {
		t.Errorf("lab up after Ctrl-C: %v", err)
	}
	assertNoLab(t, name, lab.DefaultDir(name))

	// Killed outright: the agents die with it (parent-death signal), the
	// namespaces stay until lab down.
	cmd, _ = startLabUp(t, bin, name)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if left, _ := lab.Leftovers(); !slices.ContainsFunc(left, func(n string) bool { return strings.HasPrefix(n, lab.Prefix(name)) }) {
		t.Fatal("a killed lab up left nothing to clean: the test proves nothing")
	}
	if o, err := exec.Command(bin, "lab", "down", "--name", name).CombinedOutput(); err != nil {
		t.Fatalf("lab down: %v\n%s", err, o)
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat("/sys/class/net/" + lab.MgmtLinkName(name)); err != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	assertNoLab(t, name, lab.DefaultDir(name))
}

// TestLabCampaign: an RFC 2544 search per frame size against a tbf-shaped
// switch port finds the shaping rate (tbf counts frames without FCS)
// within 5 %, the result is stored, and it round-trips through results
// show and compare; the HTML report is written.
func TestLabCampaign(t *testing.T) {
	nstest.SkipUnlessRoot(t)
	bin := buildBinary(t)
	name := fmt.Sprintf("c%d", os.Getpid()%10000)
	dir, html := t.TempDir(), filepath.Join(t.TempDir(), "report.html")
	const shape = 20e6
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "lab", "campaign", "--name", name, "--senders", "1", "--receivers", "1",
		"--sizes", "64,512,1518", "--search", "rfc2544", "--shape", "20mbit", "--trial-duration", "2s", "--max-rate", "150%",
		"--results-dir", dir, "--html", html, "--json", "--log-level", "warn")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var doc struct {
		ID      string `json:"id"`
		Status  string `json:"status"`
		Summary []struct {
			Size          int     `json:"size"`
			ThroughputPPS float64 `json:"throughput_pps"`
			L1BPS         float64 `json:"l1_bps"`
			LineRatePct   float64 `json:"line_rate_pct"`
			LossRatio     float64 `json:"loss_ratio"`
			Trials        int     `json:"trials"`
		} `json:"summary"`
		Trials []json.RawMessage `json:"trials"`
	}
	if jerr := json.Unmarshal([]byte(stdout.String()), &doc); jerr != nil || err != nil {
		t.Fatalf("lab campaign: %v / %v\n%s\n%s", err, jerr, stdout.String(), stderr.String())
	}
	assertNoLab(t, name, lab.DefaultDir(name))
	if doc.Status != "ok" || len(doc.Summary) != 3 {
		t.Fatalf("status %s, %d sizes", doc.Status, len(doc.Summary))
	}
	total := 0
	for _, s := range doc.Summary {
		want := shape / 8 / float64(s.Size-4)
		// Starting at 150 % of the shaper, the first trial loses: the
		// binary search has to find the rate.
		if s.ThroughputPPS < 0.95*want || s.ThroughputPPS > 1.05*want || s.Trials < 3 {
			t.Errorf("%d B: throughput %.0f pps, shaping rate %.0f pps (%d trials)", s.Size, s.ThroughputPPS, want, s.Trials)
		}
		total += s.Trials
	}
	if len(doc.Trials) != total {
		t.Errorf("%d trials recorded, summary counts %d", len(doc.Trials), total)
	}
	t.Logf("summary %+v", doc.Summary)
	show, err := exec.Command(bin, "results", "show", doc.ID, "--dir", dir, "--json").Output()
	if err != nil {
		t.Fatalf("results show: %v", err)
	}
	var again struct {
		ID      string            `json:"id"`
		Trials  []json.RawMessage `json:"trials"`
		Summary []json.RawMessage `json:"summary"`
	}
	if err := json.Unmarshal(show, &again); err != nil || again.ID != doc.ID || len(again.Trials) != len(doc.Trials) || len(again.Summary) != 3 {
		t.Errorf("results show: %v, id %s, %d trials", err, again.ID, len(again.Trials))
	}
	if out, err := exec.Command(bin, "results", "compare", doc.ID, doc.ID, "--dir", dir).CombinedOutput(); err != nil || !strings.Contains(string(out), "1518") {
		t.Errorf("results compare with itself: %v\n%s", err, out)
	}
	if b, err := os.ReadFile(html); err != nil || !strings.Contains(string(b), "<svg") {
		t.Errorf("HTML report: %v (%d bytes)", err, len(b))
	}
}

// TestLabRunInterrupted: a lab run stopped by Ctrl-C in the middle of its
// run phase, and one whose output pipe closed after the first line, both
// remove every namespace, link, process and file they made.
func TestLabRunInterrupted(t *testing.T) {
	nstest.SkipUnlessRoot(t)
	bin := buildBinary(t)
	name := fmt.Sprintf("i%d", os.Getpid()%10000)
	start := func(duration string) (*exec.Cmd, io.ReadCloser) {
		cmd := exec.Command(bin, "lab", "run", "--name", name, "--senders", "1", "--receivers", "1", "--duration", duration,
			"--json-stream", "--log-level", "warn", "--results-dir", t.TempDir())
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, out
	}
	// Ctrl-C once the senders run.
	cmd, out := start("60s")
	sc := bufio.NewScanner(out)
	running := false
	for !running && sc.Scan() {
		running = strings.Contains(sc.Text(), `"event":"phase"`) && strings.Contains(sc.Text(), `"phase":"run"`)
	}
	if !running {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatal("lab run ended before its run phase")
	}
	t0 := time.Now()
	_ = cmd.Process.Signal(syscall.SIGINT)
	go func() { _, _ = io.Copy(io.Discard, out) }()
	if err := cmd.Wait(); err == nil {
		t.Error("lab run interrupted mid-run exited 0")
	}
	if d := time.Since(t0); d > 30*time.Second {
		t.Errorf("lab run took %s to stop after Ctrl-C", d)
	}
	assertNoLab(t, name, lab.DefaultDir(name))

	// The reader goes away after the first line (| head -1).
	cmd, out = start("3s")
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	_ = out.Close()
	_ = cmd.Wait() // its exit status is the pipe's business; what it leaves is ours
	assertNoLab(t, name, lab.DefaultDir(name))
}
