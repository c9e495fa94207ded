//go:build linux

package lab

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/linerate/linerate/cmd/linerate/internal/vm"
	"github.com/linerate/linerate/internal/cluster/gossip"
	"github.com/linerate/linerate/internal/cluster/mtls"
	"github.com/linerate/linerate/internal/config"
	"github.com/linerate/linerate/internal/ctxsleep"
)

// Ports the lab's agents listen on, on their management address.
const (
	GossipPort = 7946
	GRPCPort   = 7443
)

// CoordinatorCert is the name of the coordinator's certificate the lab
// issues.
const CoordinatorCert = "coordinator"

// DefaultDir is where a lab keeps its certificates, gossip key, agent
// logs, pid files and tuning journals.
func DefaultDir(name string) string { return filepath.Join("/run/linerate", "lab-"+name) }

// AgentOptions start the lab's agents.
type AgentOptions struct {
	Binary   string // the linerate executable
	Dir      string // lab directory (default DefaultDir)
	LogLevel string // the agents' --log-level (default info)
	// Args are added to every agent's command line, HostArgs to the
	// named host's.
	Args     []string
	HostArgs map[string][]string
	// Ready bounds the wait for every agent's gRPC port (default 20 s).
	Ready time.Duration
	// Kernel is the VM hosts' guest kernel (Spec.Hosts HostsVM); nil
	// fetches the pinned one into vm's default cache.
	Kernel *vm.Kernel
	// GuestFiles are executables of this machine (absolute paths) that
	// every VM host's guest gets at the same path, with their
	// interpreter and shared libraries (`lab up --guest-file`): tools to
	// run in the guests with Exec, such as trafgen. VM hosts only.
	GuestFiles []string
	// Elsewhere names netns hosts whose agent the caller runs itself in
	// the host's namespace: StartAgents issues their certificates and
	// counts them as seeds, but starts and waits for no process there
	// (TestUnitUnderSystemd runs the packaged agent under systemd in a
	// container in that namespace).
	Elsewhere []string
}

// Agent is one running `linerate agent` process of the lab.
type Agent struct {
	Host *Host
	Cmd  *exec.Cmd
	Log  string // its log file
	// binary and args are what it was started with (Restart starts the
	// same again).
	binary string
	args   []string
	done   chan struct{}
	err    error
}

// Exited reports whether the process has ended.
func (a *Agent) Exited() bool {
	select {
	case <-a.done:
		return true
	default:
		return false
	}
}

// Cluster is how a coordinator reaches the lab's agents.
type Cluster struct {
	Dir       string   // the lab directory
	TLSDir    string   // certificates; the coordinator's is CoordinatorCert
	GossipKey string   // file with the base64 gossip key
	Join      []string // gossip addresses of the agents
	Bind      string   // the coordinator's gossip address (on the management link)
}

// joinSeeds is how many of the hosts started before it an agent is given
// to join.
const joinSeeds = 3

// seedsFor are the gossip addresses the i-th host's agent joins: those
// of up to joinSeeds hosts started before it (none for the first).
func seedsFor(hosts []string, i int) []string {
	return hosts[:min(i, joinSeeds, len(hosts))]
}

// StartAgents issues the lab's certificates and gossip key into o.Dir and
// starts one `linerate agent` per host in its namespace: data interface
// data0, gossip and gRPC on mgmt0, each joined to up to three hosts
// started before it (seeds, tried in a random order and retried until
// one answers, so joins spread over the first hosts). It returns once
// every agent's gRPC port accepts connections.
func (l *Lab) StartAgents(ctx context.Context, o AgentOptions) (*Cluster, error) {
	if l.MgmtHost == nil {
		return nil, fmt.Errorf("lab %s: agents need the management network (Spec.Mgmt)", l.Spec.Name)
	}
	if o.Binary == "" {
		return nil, fmt.Errorf("lab %s: no linerate binary to run the agents with", l.Spec.Name)
	}
	if o.Dir == "" {
		o.Dir = DefaultDir(l.Spec.Name)
	}
	if o.LogLevel == "" {
		o.LogLevel = "info"
	}
	if o.Ready == 0 {
		o.Ready = 20 * time.Second
	}
	l.dir = o.Dir
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("lab %s: directory: %w", l.Spec.Name, err)
	}
	// The gossip key sits in the certificate directory, as `certs init`
	// leaves it: the VM hosts' bundles take it from there.
	c := &Cluster{Dir: o.Dir, TLSDir: filepath.Join(o.Dir, "certs"), GossipKey: filepath.Join(o.Dir, "certs", gossip.KeyFile),
		Bind: net.JoinHostPort(l.MgmtHost.Addr.Addr().String(), "0")}
	if err := l.issue(c); err != nil {
		return nil, err
	}
	hosts := l.Hosts()
	for _, h := range hosts {
		c.Join = append(c.Join, net.JoinHostPort(h.MgmtAddr().String(), strconv.Itoa(GossipPort)))
	}
	if l.Spec.Hosts == HostsVM && len(o.Elsewhere) > 0 {
		return c, fmt.Errorf("lab %s: agents elsewhere (%v) need netns hosts", l.Spec.Name, o.Elsewhere)
	}
	for _, name := range o.Elsewhere {
		if !slices.ContainsFunc(hosts, func(h *Host) bool { return h.Name == name }) {
			return c, fmt.Errorf("lab %s: no host %q to run an agent elsewhere on", l.Spec.Name, name)
		}
	}
	if l.Spec.Hosts == HostsVM {
		return c, l.bootVMHosts(ctx, o, c)
	}
	l.spawner = newSpawner()
	for i, h := range hosts {
		if slices.Contains(o.Elsewhere, h.Name) {
			if i == 0 {
				return c, fmt.Errorf("lab %s: host %s is the first, which every other agent joins: its agent cannot run elsewhere", l.Spec.Name, h.Name)
			}
			continue
		}
		// The agent is configured by its file alone, as on a real host;
		// a test's own flags (o.Args, o.HostArgs) override it.
		file := filepath.Join(o.Dir, h.Name, "agent.yaml")
		settings := append(agentSettings(h, l.Spec.agentRole(h), i, c, c.GossipKey, c.TLSDir, filepath.Join(o.Dir, h.Name, "state"), o.LogLevel), l.Spec.vlanSettings()...)
		if err := writeAgentConfig(file, h, settings); err != nil {
			return c, fmt.Errorf("lab %s: %w", l.Spec.Name, err)
		}
		args := append([]string{"agent", "--config", file}, o.Args...)
		args = append(args, o.HostArgs[h.Name]...)
		a, err := l.startAgent(h, o, args)
		if err != nil {
			return c, err
		}
		// The first agent must gossip before the others join it.
		if i == 0 {
			if err := l.waitPort(ctx, a, GossipPort, o.Ready); err != nil {
				return c, err
			}
		}
	}
	for _, a := range l.agents {
		if err := l.waitPort(ctx, a, GRPCPort, o.Ready); err != nil {
			return c, err
		}
	}
	l.log.Info("agents up", "agents", len(l.agents), "dir", o.Dir)
	return c, nil
}

// agentSettings are the configuration of the i-th host's agent, with
// the gossip key, certificate directory and state directory as the
// agent sees them.
func agentSettings(h *Host, role string, i int, c *Cluster, key, tlsDir, stateDir, logLevel string) []config.Setting {
	s := []config.Setting{config.Value("name", h.Name), config.Value("tls-dir", tlsDir), config.Value("gossip-key", key)}
	if i > 0 {
		s = append(s, config.List("join", seedsFor(c.Join, i)...))
	}
	return append(s, hostSettings(h, role, stateDir, logLevel)...)
}

// hostSettings are what only the host knows, which a bootstrap bundle
// leaves to its operator: role, interface, addresses, state and log
// level, and the fixes it allows.
func hostSettings(h *Host, role, stateDir, logLevel string) []config.Setting {
	return []config.Setting{
		config.Value("role", role), config.Value("iface", "data0"),
		config.Value("bind", net.JoinHostPort(h.MgmtAddr().String(), strconv.Itoa(GossipPort))),
		config.Value("grpc", net.JoinHostPort(h.MgmtAddr().String(), strconv.Itoa(GRPCPort))),
		config.Value("state-dir", stateDir), config.Value("log-level", logLevel),
		// The lab's hosts are the lab's own: every fix a run's
		// --preflight fix asks for may be applied (and is restored).
		config.Value("allow-fixes", "all"),
	}
}

// writeAgentConfig writes h's agent configuration file.
func writeAgentConfig(file string, h *Host, settings []config.Setting) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return fmt.Errorf("agent %s configuration: %w", h.Name, err)
	}
	var b bytes.Buffer
	if err := config.Encode(&b, "linerate lab: the agent of host "+h.Name, settings); err != nil {
		return fmt.Errorf("agent %s configuration: %w", h.Name, err)
	}
	if err := os.WriteFile(file, b.Bytes(), 0o600); err != nil {
		return fmt.Errorf("agent %s configuration: %w", h.Name, err)
	}
	return nil
}

// addAgentConfig adds settings to the end of h's configuration file, as
// the operator of a host adds to its bundle's.
func addAgentConfig(file string, h *Host, settings []config.Setting) error {
	var b bytes.Buffer
	if err := config.Encode(&b, "added by linerate lab: what only host "+h.Name+" knows", settings); err != nil {
		return fmt.Errorf("agent %s configuration: %w", h.Name, err)
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("agent %s configuration: %w", h.Name, err)
	}
	if _, err := f.Write(append([]byte("\n"), b.Bytes()...)); err != nil {
		f.Close()
		return fmt.Errorf("agent %s configuration: %w", h.Name, err)
	}
	return f.Close()
}

// issue writes a CA, a certificate per host (naming its management
// address) and the coordinator's, and a fresh gossip key.
func (l *Lab) issue(c *Cluster) error {
	if _, _, err := mtls.Init(c.TLSDir, mtls.CAOptions{CommonName: "linerate lab " + l.Spec.Name}, true); err != nil {
		return fmt.Errorf("lab %s: certificate authority: %w", l.Spec.Name, err)
	}
	leaves := []mtls.LeafOptions{{Name: CoordinatorCert, Role: mtls.RoleCoordinator}}
	for _, h := range l.Hosts() {
		leaves = append(leaves, mtls.LeafOptions{Name: h.Name, Role: mtls.RoleAgent, Hosts: []string{h.MgmtAddr().String()}})
	}
	for _, lo := range leaves {
		if _, _, err := mtls.Issue(c.TLSDir, lo, true); err != nil {
			return fmt.Errorf("lab %s: certificate %s: %w", l.Spec.Name, lo.Name, err)
		}
	}
	// The lab's CA is made afresh at every start and only needed here:
	// its key goes, so the agents and coordinators serve and dial a
	// directory without it, as on real hosts.
	if err := os.Remove(filepath.Join(c.TLSDir, mtls.CAKeyFile)); err != nil {
		return fmt.Errorf("lab %s: remove the CA key: %w", l.Spec.Name, err)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return fmt.Errorf("lab %s: gossip key: %w", l.Spec.Name, err)
	}
	if err := gossip.WriteKey(c.GossipKey, key); err != nil {
		return fmt.Errorf("lab %s: gossip key: %w", l.Spec.Name, err)
	}
	return nil
}

func (l *Lab) startAgent(h *Host, o AgentOptions, args []string) (*Agent, error) {
	dir := filepath.Join(o.Dir, h.Name)
	if err := os.MkdirAll(filepath.Join(dir, "state"), 0o700); err != nil {
		return nil, fmt.Errorf("lab %s: agent %s: %w", l.Spec.Name, h.Name, err)
	}
	logPath := filepath.Join(dir, "agent.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lab %s: agent %s log: %w", l.Spec.Name, h.Name, err)
	}
	defer logf.Close()
	cmd := h.NS.Command(context.Background(), o.Binary, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// The agents never outlive the lab's process: they get SIGTERM when
	// it dies, even by SIGKILL.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := l.spawner.start(cmd); err != nil {
		return nil, fmt.Errorf("lab %s: start agent %s: %w", l.Spec.Name, h.Name, err)
	}
	a := &Agent{Host: h, Cmd: cmd, Log: logPath, binary: o.Binary, args: args, done: make(chan struct{})}
	go func() {
		a.err = cmd.Wait()
		close(a.done)
	}()
	l.agents = append(l.agents, a)
	if err := os.WriteFile(filepath.Join(dir, "agent.pid"), []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o600); err != nil {
		return a, fmt.Errorf("lab %s: agent %s pid file: %w", l.Spec.Name, h.Name, err)
	}
	l.log.Debug("agent started", "host", h.Name, "pid", cmd.Process.Pid, "log", logPath)
	return a, nil
}

// waitPort waits until a's management address accepts TCP on port.
func (l *Lab) waitPort(ctx context.Context, a *Agent, port int, timeout time.Duration) error {
	return l.waitListening(ctx, a.Host, port, timeout, a.Log, func() string {
		if !a.Exited() {
			return ""
		}
		return fmt.Sprintf("exited (%v)", a.err)
	})
}

// waitListening waits until h's management address accepts TCP on port,
// giving up when ended says why the agent never will, with the tail of
// its log.
func (l *Lab) waitListening(ctx context.Context, h *Host, port int, timeout time.Duration, log string, ended func() string) error {
	addr := net.JoinHostPort(h.MgmtAddr().String(), strconv.Itoa(port))
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		if why := ended(); why != "" {
			return fmt.Errorf("lab %s: agent %s %s before listening on %s:\n%s", l.Spec.Name, h.Name, why, addr, tail(log, 15))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("lab %s: agent %s not listening on %s after %s:\n%s", l.Spec.Name, h.Name, addr, timeout, tail(log, 15))
		}
		if err := ctxsleep.Sleep(ctx, 50*time.Millisecond); err != nil {
			return err
		}
	}
}

// Agents are the running agent processes.
func (l *Lab) Agents() []*Agent { return l.agents }

// Agent is the agent process of the named host (nil if none).
func (l *Lab) Agent(host string) *Agent {
	for _, a := range l.agents {
		if a.Host.Name == host {
			return a
		}
	}
	return nil
}

// Stop sends the agent SIGTERM (it stops sending, detaches, restores and
// leaves the cluster) and waits up to timeout for it to end, then kills
// it. It returns an error when the agent had to be killed or did not
// exit cleanly.
func (a *Agent) Stop(timeout time.Duration) error {
	if !a.Exited() {
		_ = a.Cmd.Process.Signal(syscall.SIGTERM)
	}
	select {
	case <-a.done:
	case <-time.After(timeout):
		_ = a.Cmd.Process.Kill()
		<-a.done
		return fmt.Errorf("agent %s did not stop within %s: killed (log %s)", a.Host.Name, timeout, a.Log)
	}
	if a.err != nil {
		return fmt.Errorf("agent %s stopped: %w (log %s)", a.Host.Name, a.err, a.Log)
	}
	return nil
}

// Restart starts host's agent again after it ended (same arguments, and
// --join of other hosts when it had none), as an operator restarts a
// crashed agent; it restores a journal it finds. It runs o.Binary when
// given (the same agent under another wrapper), else the binary it ran.
func (l *Lab) Restart(ctx context.Context, host string, o AgentOptions) (*Agent, error) {
	old := l.Agent(host)
	if old == nil {
		return nil, fmt.Errorf("lab %s: no agent on %s", l.Spec.Name, host)
	}
	if !old.Exited() {
		return nil, fmt.Errorf("lab %s: agent %s still runs", l.Spec.Name, host)
	}
	if o.Dir == "" {
		o.Dir = l.dir
	}
	if o.Ready == 0 {
		o.Ready = 20 * time.Second
	}
	if o.Binary == "" {
		o.Binary = old.binary
	}
	args := old.args
	if !slices.Contains(args, "--join") {
		// The first host joined nobody; started again alone it would
		// form a cluster of its own: it joins the others.
		var seeds []string
		for _, h := range l.Hosts() {
			if h != old.Host && len(seeds) < joinSeeds {
				seeds = append(seeds, net.JoinHostPort(h.MgmtAddr().String(), strconv.Itoa(GossipPort)))
			}
		}
		args = append(slices.Clone(args), "--join", strings.Join(seeds, ","))
	}
	a, err := l.startAgent(old.Host, o, args)
	if err != nil {
		return nil, err
	}
	for i, x := range l.agents {
		if x == old {
			l.agents = append(l.agents[:i], l.agents[i+1:]...)
			break
		}
	}
	return a, l.waitPort(ctx, a, GRPCPort, o.Ready)
}

// StopAgents sends SIGTERM to every agent (they stop sending, detach,
// restore and leave the cluster), waits up to timeout, then kills what is
// left. Safe to call more than once.
func (l *Lab) StopAgents(timeout time.Duration) error {
	for _, a := range l.agents {
		if !a.Exited() {
			_ = a.Cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	deadline := time.After(timeout)
	var errs []error
	for _, a := range l.agents {
		select {
		case <-a.done:
		case <-deadline:
		}
		if !a.Exited() {
			_ = a.Cmd.Process.Kill()
			<-a.done
			errs = append(errs, fmt.Errorf("agent %s did not stop within %s: killed (log %s)", a.Host.Name, timeout, a.Log))
		}
	}
	l.agents = nil
	if l.spawner != nil {
		l.spawner.close()
		l.spawner = nil
	}
	return errors.Join(errs...)
}

// tail is the last n lines of a file, for error messages.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// spawner starts processes from one OS thread that lives as long as the
// lab: a child's parent-death signal fires when the thread that forked
// it ends, and the Go runtime may end threads it no longer needs.
type spawner struct {
	req  chan spawnReq
	quit chan struct{}
}

type spawnReq struct {
	cmd *exec.Cmd
	err chan error
}

func newSpawner() *spawner {
	s := &spawner{req: make(chan spawnReq), quit: make(chan struct{})}
	go func() {
		runtime.LockOSThread() // never unlocked: the thread stays while the lab runs
		for {
			select {
			case r := <-s.req:
				r.err <- r.cmd.Start()
			case <-s.quit:
				return // the locked thread exits with the goroutine
			}
		}
	}()
	return s
}

func (s *spawner) start(cmd *exec.Cmd) error {
	errc := make(chan error, 1)
	s.req <- spawnReq{cmd: cmd, err: errc}
	return <-errc
}

func (s *spawner) close() { close(s.quit) }

// KillLeftoverAgents ends the agent processes a crashed lab left (pid
// files under dir whose process still runs `linerate … agent` with that
// directory on its command line) and returns their host names.
func KillLeftoverAgents(dir string, timeout time.Duration) ([]string, error) {
	pids, err := filepath.Glob(filepath.Join(dir, "*", "agent.pid"))
	if err != nil {
		return nil, err
	}
	var killed []string
	var errs []error
	for _, pf := range pids {
		b, err := os.ReadFile(pf)
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 1 {
			continue
		}
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || !strings.Contains(string(cmdline), "agent\x00") || !strings.Contains(string(cmdline), dir) {
			continue // gone, or the pid now belongs to someone else
		}
		host := filepath.Base(filepath.Dir(pf))
		_ = syscall.Kill(pid, syscall.SIGTERM)
		deadline := time.Now().Add(timeout)
		for syscall.Kill(pid, 0) == nil && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if syscall.Kill(pid, 0) == nil {
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				errs = append(errs, fmt.Errorf("kill agent %s (pid %d): %w", host, pid, err))
				continue
			}
		}
		killed = append(killed, host)
	}
	return killed, errors.Join(errs...)
}
