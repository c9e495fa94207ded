//go:build linux && traffic

package xdp

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netlink/nl"

	"github.com/linerate/linerate/internal/netns/nstest"
	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/pktgen/internal/engine"
	"github.com/linerate/linerate/pktgen/pktgentest"
)

// The backend's own XDP program, on a veth made to need it (forceOwn):
// a veth transmits XDP frames whether or not its own end has a program
// (its peer decides), so the need is the test's; the attach, the send
// through it, the detach and the kernel's refusals are real. The VM lab
// proves the need itself on virtio_net (TestLabVMHosts/xdp).

// xdpOn reads the XDP program attached to the setup's sending end.
func xdpOn(t testing.TB, s *pktgentest.Setup) (xdpState, string) {
	t.Helper()
	var st xdpState
	var name string
	if err := engine.OnThread(s.EnterA(), func() (err error) {
		st, name, err = readXDPState(s.Pair.A.Index)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return st, name
}

// attachUsers attaches an XDP_PASS program of a user's, named name, to
// the setup's sending end in mode; the test's end detaches it.
func attachUsers(t *testing.T, s *pktgentest.Setup, name string, mode link.XDPAttachFlags) {
	t.Helper()
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: name, Type: ebpf.XDP, License: "GPL",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, xdpPass), asm.Return()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { prog.Close() })
	var l link.Link
	if err := engine.OnThread(s.EnterA(), func() (err error) {
		l, err = link.AttachXDP(link.XDPOptions{Program: prog, Interface: s.Pair.A.Index, Flags: mode})
		return err
	}); err != nil {
		t.Fatalf("attach %s: %v", name, err)
	}
	t.Cleanup(func() { l.Close() })
}

// usersSetup is a test bed of one thread sending count frames, whose
// sending end has a user's XDP_PASS program named name attached in mode,
// its state then, and the backend made to need its own program.
func usersSetup(t *testing.T, count uint64, name string, mode link.XDPAttachFlags) (*pktgentest.Setup, *Backend, xdpState) {
	t.Helper()
	s := pktgentest.NewSetup(t, 1, []int{0}, int(count), func(c *pktgen.Config) { c.Count = count })
	attachUsers(t, s, name, mode)
	before, _ := xdpOn(t, s)
	b := newBackend(t, s)
	b.forceOwn = true
	return s, b, before
}

// TestOwnProgramForTheSend: nothing attached, so the backend attaches
// its own program (native, XDP_PASS) for the send: it is there while the
// frames go, gone after, the sink has every frame, and the summary says
// what was done and why.
func TestOwnProgramForTheSend(t *testing.T) {
	pktgentest.SkipUnlessLiveFrames(t)
	s := pktgentest.NewSetup(t, 1, []int{0}, 20_000, func(c *pktgen.Config) { c.RatePPS, c.Duration = 20_000, 600*time.Millisecond })
	b := newBackend(t, s)
	b.forceOwn = true
	var during []string
	from := time.Now()
	sum, err := b.Run(context.Background(), s.Cfg, func(pktgen.Progress) {
		st, name := xdpOn(t, s)
		during = append(during, name+" in "+modeName(st.mode))
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Verify(t, sum, from, time.Now())
	want := ownProgName + " in " + modeName(nl.XDP_ATTACHED_DRV)
	if len(during) == 0 || strings.Join(during, ",") != strings.Repeat(want+",", len(during)-1)+want {
		t.Errorf("while sending, lra had %q: want %q at every progress", during, want)
	}
	if st, name := xdpOn(t, s); st.mode != nl.XDP_ATTACHED_NONE {
		t.Errorf("after the send lra still has XDP program %q (id %d, %s)", name, st.id, modeName(st.mode))
	}
	note := strings.Join(sum.Notes, "; ")
	if !strings.Contains(note, "attached its own XDP program lr_xmit_pass (XDP_PASS, native mode) to lra for the send and detached it after: the test made driver veth need one") {
		t.Errorf("notes %q: want what was attached and why", note)
	}
	t.Logf("during %d progress samples: %s; notes: %s", len(during), during[0], note)
}

// TestOwnProgramUsesNative: a user's native program is there: the send
// goes through it and leaves it, the same program, attached.
func TestOwnProgramUsesNative(t *testing.T) {
	pktgentest.SkipUnlessLiveFrames(t)
	s, b, before := usersSetup(t, 5000, "users_pass", link.XDPDriverMode)
	from := time.Now()
	sum, err := b.Run(context.Background(), s.Cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Verify(t, sum, from, time.Now())
	if after, name := xdpOn(t, s); after != before || name != "users_pass" {
		t.Errorf("the user's program %+v became %+v (%q) after the send: want it left as it was", before, after, name)
	}
	if note := strings.Join(sum.Notes, "; "); !strings.Contains(note, "sent through the native XDP program users_pass") || !strings.Contains(note, "left it there") {
		t.Errorf("notes %q: want the user's program named, left attached", note)
	}
}

// TestOwnProgramRefusedBesideGeneric: a generic (skb) program is there:
// the kernel would refuse a native one beside it, so the probe and the
// run refuse by name, and the program stays.
func TestOwnProgramRefusedBesideGeneric(t *testing.T) {
	s, b, before := usersSetup(t, 10, "users_generic", link.XDPGenericMode)
	const want = "an XDP program users_generic (id "
	if err := b.Probe("lra"); !errors.Is(err, pktgen.ErrUnsupported) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "generic (xdpgeneric) mode") {
		t.Errorf("probe: %v; want ErrUnsupported naming %q in generic mode", err, want)
	}
	_, err := b.Run(context.Background(), s.Cfg, nil)
	if !errors.Is(err, pktgen.ErrUnsupported) || !strings.Contains(err.Error(), want) {
		t.Errorf("run: %v; want ErrUnsupported naming %q", err, want)
	}
	if after, name := xdpOn(t, s); after != before || name != "users_generic" {
		t.Errorf("the generic program %+v became %+v (%q): want it left as it was", before, after, name)
	}
	if st, err := s.Sink.Stats(); err != nil || st.Test != 0 {
		t.Errorf("the sink saw %+v (%v): want nothing sent", st, err)
	}
}

// helperNSEnv names the namespace whose lra the helper process attaches
// the backend's own program to.
const helperNSEnv = "LINERATE_XDP_OWN_HELPER_NS"

// TestOwnProgramHelper is the process TestOwnProgramGoneAfterKill kills:
// it attaches the backend's own program as a run does (attachOwn) and
// holds it until killed.
func TestOwnProgramHelper(t *testing.T) {
	ns := os.Getenv(helperNSEnv)
	if ns == "" {
		t.Skip("the process TestOwnProgramGoneAfterKill starts and kills")
	}
	var own *ownProgram
	if err := engine.OnThread(pktgentest.Enter(ns), func() error {
		ifi, err := net.InterfaceByName("lra")
		if err != nil {
			return err
		}
		own, err = attachOwn("lra", ifi.Index)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer own.detach() // never reached: the test kills this process
	time.Sleep(time.Minute)
	t.Fatal("the helper was not killed within a minute")
}

// TestOwnProgramGoneAfterKill: a process killed outright (SIGKILL, no
// cleanup of its own) while it holds the backend's own program leaves
// no program behind: the program is held by a BPF link that nothing
// pins, which the kernel releases with the process's last file
// descriptor. (The send itself killed mid-send, in a VM guest:
// TestLabVMHosts/xdp.)
func TestOwnProgramGoneAfterKill(t *testing.T) {
	p := nstest.NewPair(t, 1)
	cmd := exec.Command(os.Args[0], "-test.run=^TestOwnProgramHelper$", "-test.v")
	cmd.Env = append(os.Environ(), helperNSEnv+"="+p.A.NS.Name)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	on := func() (xdpState, string) {
		var st xdpState
		var name string
		if err := engine.OnThread(pktgentest.Enter(p.A.NS.Name), func() (err error) {
			st, name, err = readXDPState(p.A.Index)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return st, name
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, name := on()
		if name == ownProgName && st.mode == nl.XDP_ATTACHED_DRV {
			t.Logf("the helper (pid %d) holds %s (id %d) on lra", cmd.Process.Pid, name, st.id)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the helper's program is not on lra within 20 s (%q, %+v):\n%s", name, st, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	killed := time.Now()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the helper ended with %v, want killed by SIGKILL:\n%s", err, out.String())
	}
	for {
		st, name := on()
		if st.mode == nl.XDP_ATTACHED_NONE {
			t.Logf("lra has no XDP program %s after the helper was killed", time.Since(killed).Round(time.Millisecond))
			break
		}
		if time.Since(killed) > 2*time.Second {
			t.Fatalf("lra still has %q (id %d, %s) 2 s after the process holding it was killed", name, st.id, modeName(st.mode))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
