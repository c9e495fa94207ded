//go:build linux

package lab

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/linerate/linerate/cmd/linerate/internal/vm"
	"github.com/linerate/linerate/internal/cluster/bundle"
	"github.com/linerate/linerate/internal/cluster/mtls"
)

// Where a VM host's agent finds what the lab gives it, in the guest
// (its configuration and certificates: its bundle, in bundle.ConfigDir).
const (
	guestBinary   = "/bin/linerate"
	guestStateDir = "/var/lib/linerate/state"
)

// guestBundle writes h's bootstrap bundle (as `certs issue --bundle`
// does, into the lab's bundles/), adds the host's own settings to its
// agent.yaml, and returns its files by their guest paths.
func (l *Lab) guestBundle(h *Host, i int, o AgentOptions, c *Cluster) (map[string]string, error) {
	b, err := bundle.Write(bundle.Options{CADir: c.TLSDir, Name: h.Name, Role: mtls.RoleAgent, Join: seedsFor(c.Join, i), Out: filepath.Join(o.Dir, "bundles"), Force: true})
	if err != nil {
		return nil, fmt.Errorf("lab %s: VM host %s: %w", l.Spec.Name, h.Name, err)
	}
	settings := append(hostSettings(h, l.Spec.agentRole(h), guestStateDir, o.LogLevel), l.Spec.vlanSettings()...)
	if err := addAgentConfig(b.Config, h, append(settings, vmKnownChecks())); err != nil {
		return nil, fmt.Errorf("lab %s: VM host %s: %w", l.Spec.Name, h.Name, err)
	}
	files := map[string]string{}
	for _, p := range b.Files {
		rel, err := filepath.Rel(b.Dir, p)
		if err != nil {
			return nil, fmt.Errorf("lab %s: VM host %s: %w", l.Spec.Name, h.Name, err)
		}
		files[path.Join(bundle.ConfigDir, filepath.ToSlash(rel))] = p
	}
	return files, nil
}

// vmModules are loaded in every VM host before its agent starts: the
// kernel's packet generator (senders use it) and the qdiscs and
// helpers a real host would have: netem, which a lab's delay is
// (Spec.Delay).
var vmModules = []string{"pktgen", "sch_netem"}

// bootVMHosts boots one qemu guest per host, each starting its agent as
// a real host would, and waits until every agent's gRPC port answers on
// the management network. A guest gets only its own certificate and
// key, the CA's certificate and the gossip key.
func (l *Lab) bootVMHosts(ctx context.Context, o AgentOptions, c *Cluster) error {
	k := o.Kernel
	if k == nil {
		var err error
		if k, err = vmPrerequisites(ctx, o, l.log); err != nil {
			return fmt.Errorf("lab %s: %w", l.Spec.Name, err)
		}
	}
	extra, err := o.guestFiles()
	if err != nil {
		return fmt.Errorf("lab %s: %w", l.Spec.Name, err)
	}
	if len(extra) > 0 {
		l.log.Info("VM hosts get guest files", "files", o.GuestFiles, "with_libraries", len(extra))
	}
	for i, h := range l.Hosts() {
		dir := filepath.Join(o.Dir, h.Name)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("lab %s: VM host %s: %w", l.Spec.Name, h.Name, err)
		}
		// The guest is bootstrapped as a real host: its /etc/linerate is
		// its bundle from `certs issue --bundle` (agent.yaml and tls/),
		// with what only the host knows added to agent.yaml, and its
		// agent reads that default file; a test's own flags override it.
		files, err := l.guestBundle(h, i, o, c)
		if err != nil {
			return err
		}
		files[guestBinary] = o.Binary
		maps.Copy(files, extra) // --guest-file: none overlaps the lab's own (ownGuestPath)
		args := append(append([]string{"agent"}, o.Args...), o.HostArgs[h.Name]...)
		m := &vm.Machine{
			Name: h.Name, Kernel: k, Layout: l.Spec.Layout(), Memory: vmMemory,
			Data:    vm.NIC{Tap: h.Switch.Name, MAC: h.Data.MAC, Addr: h.Data.Addr, Addr6: h.Data.Addr6, Name: h.Data.Name},
			Mgmt:    vm.NIC{Tap: "m" + h.Name, MAC: h.Mgmt.MAC, Addr: h.Mgmt.Addr, Name: h.Mgmt.Name},
			Modules: vmModules,
			Files:   files,
			Script:  l.guestScript(h, args),
			Dir:     dir,
			Command: l.Switch.Command,
			Log:     l.log.Named(h.Name),
		}
		maps.Copy(m.Files, extra)
		start := time.Now()
		run, err := m.Start(ctx)
		if err != nil {
			return fmt.Errorf("lab %s: boot VM host %s: %w", l.Spec.Name, h.Name, err)
		}
		l.machines = append(l.machines, &machine{host: h, run: run, dir: dir, started: start})
	}
	for _, m := range l.machines {
		// Both ports: the agent opens its gRPC port before it binds
		// gossip, and a coordinator joining in between is refused (seen
		// under TCG: "connect: connection refused" at 7946).
		for _, port := range []int{GRPCPort, GossipPort} {
			if err := l.waitListening(ctx, m.host, port, o.Ready, filepath.Join(m.dir, vm.AgentLog), m.ended); err != nil {
				return err
			}
		}
		// Boot to agent ready: what bench/vm-figures.sh reads.
		l.log.Info("VM host ready", "host", m.host.Name, "boot_to_agent", time.Since(m.started).Round(time.Millisecond), "accel", m.run.Accel())
	}
	if err := l.checkDelays(ctx); err != nil {
		return err
	}
	l.log.Info("VM hosts up", "hosts", len(l.machines), "vcpus", l.Spec.Layout().VCPUs, "queues", l.Spec.Layout().Queues, "dir", o.Dir)
	return nil
}

// guestScript is what VM host h runs once its guest is up: the agent
// (args), and before it on a sender of a lab with a delay the netem
// that is that delay on its data interface, set and read back by this
// binary (the guest's busybox has no tc for netem). A netem that cannot
// be set ends the script before the agent starts: the guest powers off
// and the lab fails, naming the host, with the error in its agent log.
func (l *Lab) guestScript(h *Host, args []string) string {
	var b strings.Builder
	b.WriteString("mkdir -p " + guestStateDir + "\n")
	if h.Role == "sender" && !l.Spec.Delay.IsZero() {
		b.WriteString(shellJoin(guestBinary, "lab", "netem", "--iface", h.Data.Name, "--delay", l.Spec.Delay.String()) + " || exit 1\n")
	}
	b.WriteString("exec " + guestBinary + " " + shellJoin(args...) + "\n")
	return b.String()
}

// checkDelays reads back, through each guest's shell, the netem on
// every VM sender's data interface once its agent is up: a lab that
// asked for a delay and does not have it on every sender fails, and
// what the guests hold is what the lab's truth states (Truth).
func (l *Lab) checkDelays(ctx context.Context) error {
	if l.Spec.Delay.IsZero() {
		return nil
	}
	l.delays = map[string]Delay{}
	for _, m := range l.machines {
		if m.host.Role != "sender" {
			continue
		}
		cmd := shellJoin(guestBinary, "lab", "netem", "--iface", m.host.Data.Name)
		out, rc, err := m.run.Exec(ctx, cmd)
		if err != nil || rc != 0 {
			return fmt.Errorf("lab %s: VM host %s: read its netem (%s): exit %d, %v: %s", l.Spec.Name, m.host.Name, cmd, rc, err, strings.TrimSpace(out))
		}
		got, err := ParseDelay(strings.TrimSpace(out))
		if err != nil {
			return fmt.Errorf("lab %s: VM host %s: its netem reads %q: %w", l.Spec.Name, m.host.Name, strings.TrimSpace(out), err)
		}
		if got != l.Spec.Delay {
			return fmt.Errorf("lab %s: VM host %s: its data interface %s delays by %s, want %s", l.Spec.Name, m.host.Name, m.host.Data.Name, got, l.Spec.Delay)
		}
		l.delays[m.host.Name] = got
		l.log.Info("VM sender delays toward the receivers", "host", m.host.Name, "netem", got)
	}
	return nil
}

// vmPrerequisites checks what VM hosts need — qemu, a static linerate
// binary for the guests — and returns the guest kernel o names or, when
// it names none, the pinned one from vm's cache (fetched there first).
func vmPrerequisites(ctx context.Context, o AgentOptions, log hclog.Logger) (*vm.Kernel, error) {
	if err := vm.Available(); err != nil {
		return nil, fmt.Errorf("VM hosts need qemu: %w (or run make vmtest-deps as root)", err)
	}
	if err := vm.CheckStatic(o.Binary); err != nil {
		return nil, fmt.Errorf("the VM hosts' agents run %s: %w (build it with CGO_ENABLED=0, as make build does)", o.Binary, err)
	}
	if _, err := o.guestFiles(); err != nil {
		return nil, err
	}
	if o.Kernel != nil {
		return o.Kernel, nil
	}
	k, err := vm.FetchKernel(ctx, "", log)
	if err != nil {
		return nil, fmt.Errorf("guest kernel: %w", err)
	}
	return k, nil
}

// ended says why m's agent will never listen: its guest stopped.
func (m *machine) ended() string {
	select {
	case <-m.run.Done():
		return fmt.Sprintf("stopped: its guest ended (qemu: %v); console:\n%s\nagent log", m.run.Err(), tail(filepath.Join(m.dir, vm.ConsoleLog), 20))
	default:
		return ""
	}
}

// Machine is the running guest of a VM host (nil for another host).
func (l *Lab) Machine(host string) *vm.Running {
	for _, m := range l.machines {
		if m.host.Name == host {
			return m.run
		}
	}
	return nil
}

// shellJoin quotes words for /bin/sh.
func shellJoin(words ...string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}
