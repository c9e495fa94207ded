//go:build linux && traffic

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linerate/linerate/cmd/linerate/internal/lab"
	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/internal/netns/nstest"
	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/receiver"
)

// setpriv is the command line prefix (up to and including "--") that
// runs a command as the unit runs the agent, by hand where systemd is not
// PID 1: util-linux's setpriv with the unit's CapabilityBoundingSet
// (caps, as the unit spells them) as the whole bounding set, nothing
// inheritable or ambient, and NoNewPrivileges — still uid 0, as the
// unit's agent is.
func setpriv(caps []string, noNewPrivs bool) []string {
	set := []string{"-all"}
	for _, c := range caps {
		set = append(set, "+"+strings.ToLower(strings.TrimPrefix(c, "CAP_")))
	}
	args := []string{"setpriv", "--bounding-set=" + strings.Join(set, ","), "--inh-caps=-all", "--ambient-caps=-all"}
	if noNewPrivs {
		args = append(args, "--no-new-privs")
	}
	return append(args, "--")
}

// sandboxed writes an executable that runs the binary under setpriv.
func sandboxed(t *testing.T, bin string, caps []string, noNewPrivs bool) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "linerate")
	script := "#!/bin/sh\nexec " + strings.Join(setpriv(caps, noNewPrivs), " ") + " " + bin + ` "$@"` + "\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// capBnd is the CapBnd line of /proc/PID/status of a process setpriv
// starts with caps: the bounding set an agent under them must have.
func capBnd(t *testing.T, caps []string) string {
	t.Helper()
	args := append(setpriv(caps, false), "grep", "^CapBnd:", "/proc/self/status")
	out, err := exec.Command(args[0], args[1:]...).Output()
	if err != nil {
		t.Fatalf("%s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}

// One lab of one sender and one receiver whose real agents run with only
// the unit's capabilities: an XDP receiver armed counting an AF_PACKET
// sender's packets, then an AF_XDP sender into an AF_PACKET receiver,
// every packet counted. Then each of the unit's capabilities taken away
// in turn, the agents restarted under the smaller set (each stopped and
// started again in turn, so the other keeps the cluster; each checked to
// run with exactly that bounding set, and no XDP program left on a data
// interface between cases), makes the run that needs it fail, naming the
// operation the kernel refused: the set is what the agent needs and no
// capability in it is spare. (The netns lab's veths have no queue IRQs
// to pin, and the host has no pktgen: those rest on the kernel source
// the unit's comments cite.)
func TestUnitCapabilities(t *testing.T) {
	nstest.SkipUnlessRoot(t)
	requireTool(t, "setpriv", "Debian's util-linux provides it")
	bin := Binary(t)
	s := unitSettings(t, unitFile)
	caps := strings.Fields(one(t, s, "CapabilityBoundingSet"))
	noNewPrivs := one(t, s, "NoNewPrivileges") == "yes"
	if !noNewPrivs || len(caps) == 0 {
		t.Fatalf("the unit has NoNewPrivileges=%v and CapabilityBoundingSet=%v", noNewPrivs, caps)
	}
	if v := s["LimitMEMLOCK"]; len(v) != 0 {
		t.Fatalf("the unit sets LimitMEMLOCK=%v, which this test does not apply by hand: apply it (prlimit) or drop it", v)
	}
	// An XDP receiver armed (CAP_BPF, CAP_NET_ADMIN, CAP_PERFMON) counting
	// what an AF_PACKET sender sends (CAP_NET_RAW); then an AF_XDP sender
	// (its socket, its UMEM: CAP_IPC_LOCK) into an AF_PACKET receiver.
	xdpRecv := coordinator.Spec{Senders: []string{"s1"}, Receivers: []string{"r1"}, Count: 5000, Backend: pktgen.BackendAFPacket, Method: receiver.MethodXDP, Drain: 200 * time.Millisecond}
	afxdpSend := xdpRecv
	afxdpSend.Backend, afxdpSend.Method = pktgen.BackendAFXDP, receiver.MethodAFPacket
	hosts := append(slices.Clone(xdpRecv.Senders), xdpRecv.Receivers...)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	name := fmt.Sprintf("uc%d", os.Getpid()%10000)
	sess, err := lab.Open(ctx, lab.Options{Spec: lab.Spec{Name: name, Senders: 1, Receivers: 1},
		Agents: lab.AgentOptions{Binary: sandboxed(t, bin, caps, true), LogLevel: "warn"}})
	if err != nil {
		t.Fatalf("lab with the agents under %v: %v", caps, err)
	}
	dir := sess.Agents.Dir
	defer func() {
		if err := sess.Close(); err != nil {
			t.Error(err)
		}
		for _, r := range lab.Remains(name, dir) {
			t.Errorf("%s left behind", r)
		}
	}()
	alive := func(host string) bool {
		for _, m := range sess.Cluster.Members() {
			if m.Name == host {
				return m.Status == "alive"
			}
		}
		return false
	}
	// restart stops each agent and starts it again under caps, one at a
	// time: the other keeps the cluster the coordinator is in.
	restart := func(t *testing.T, caps []string) {
		t.Helper()
		for _, h := range hosts {
			if err := sess.Lab.Agent(h).Stop(10 * time.Second); err != nil {
				t.Fatal(err)
			}
			if _, ok := waitFor(10*time.Second, func() bool { return !alive(h) }); !ok {
				t.Fatalf("agent %s stopped, and the coordinator still lists it alive", h)
			}
			if _, err := sess.Lab.Restart(ctx, h, lab.AgentOptions{Binary: sandboxed(t, bin, caps, true)}); err != nil {
				t.Fatalf("agent %s under %v: %v", h, caps, err)
			}
		}
	}
	// under checks that the agents are alive, run without new privileges
	// and with caps as their whole bounding set, and that no data
	// interface holds an XDP program (a case left nothing to the next).
	under := func(t *testing.T, caps []string) {
		t.Helper()
		if _, err := sess.Cluster.WaitNamed(ctx, hosts, 20*time.Second); err != nil {
			t.Fatal(err)
		}
		want := capBnd(t, caps)
		for _, a := range sess.Lab.Agents() {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", a.Cmd.Process.Pid))
			if err != nil || !strings.Contains(string(b), "NoNewPrivs:\t1") || !strings.Contains(string(b), want+"\n") {
				t.Fatalf("agent %s (pid %d) does not run without new privileges and with %s (%v): %v\n%s", a.Host.Name, a.Cmd.Process.Pid, want, caps, err, b)
			}
		}
		for _, h := range sess.Lab.Hosts() {
			out, err := h.NS.Command(ctx, "ip", "link", "show", "dev", "data0").CombinedOutput()
			if err != nil || strings.Contains(string(out), "xdp") {
				t.Fatalf("%s's data0 before the runs: %v\n%s", h.Name, err, out)
			}
		}
	}
	run := func(specs ...coordinator.Spec) []error {
		var errs []error
		for _, spec := range specs {
			res, err := sess.Runner().Run(ctx, spec)
			switch {
			case err != nil:
				errs = append(errs, err)
			case res.Status != coordinator.StatusOK:
				errs = append(errs, fmt.Errorf("run %s: %s", res.Status, res.Error))
			case len(res.Flows) != 1 || res.Flows[0].Sent != spec.Count || res.Flows[0].Received != spec.Count:
				errs = append(errs, fmt.Errorf("flows %+v, want %d sent and received", res.Flows, spec.Count))
			default:
				errs = append(errs, nil)
			}
		}
		return errs
	}
	names := []string{"afpacket sender into an xdp receiver", "afxdp sender into an afpacket receiver"}
	if !t.Run("unit", func(t *testing.T) {
		under(t, caps)
		for i, err := range run(xdpRecv, afxdpSend) {
			if err != nil {
				t.Errorf("%s under the unit's capabilities %v: %v", names[i], caps, err)
			}
		}
	}) {
		t.FailNow() // a capability taken away proves nothing while the unit's own set fails
	}
	for _, c := range caps {
		t.Run("without "+c, func(t *testing.T) {
			fewer := slices.DeleteFunc(slices.Clone(caps), func(x string) bool { return x == c })
			restart(t, fewer)
			under(t, fewer)
			errs := run(xdpRecv, afxdpSend)
			failed := slices.IndexFunc(errs, func(err error) bool { return err != nil })
			if failed < 0 {
				t.Fatalf("without %s both runs passed: the unit need not grant it", c)
			}
			// EPERM from a capability check, EACCES from the verifier,
			// ENOBUFS from locked memory over RLIMIT_MEMLOCK.
			if msg := errs[failed].Error(); !strings.Contains(msg, "operation not permitted") && !strings.Contains(msg, "permission denied") &&
				!strings.Contains(msg, "no buffer space available") {
				t.Errorf("without %s the run failed, but not naming the refused operation: %v", c, msg)
			}
			t.Logf("without %s, the %s run: %v", c, names[failed], errs[failed])
		})
	}
}
