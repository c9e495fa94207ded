package agent

import (
	"context"
	"fmt"
	"net/netip"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/linerate/linerate/doctor"
	"github.com/linerate/linerate/receiver"
)

// The receiver's lifecycle refusals (arming for real needs a namespace:
// flow_linux_test.go).
func TestReceivingRefusals(t *testing.T) {
	s := unitService(t, RoleReceiver, fakeNetOS{})
	rx := s.rx
	if st := rx.state(); st.phase != phaseIdle {
		t.Errorf("new: %s", st.phase)
	}
	_, _, err := rx.collect(true)
	wantKind(t, err, ErrNotReady, "collect: the receiver is not armed (Arm first)", "collect unarmed")
	if err := rx.disarm(); err != nil {
		t.Errorf("disarm unarmed: %v", err)
	}
	_, err = rx.arm(receiver.Options{Method: "telepathy"})
	wantKind(t, err, ErrInvalid, `arm: invalid receiver options: Method "telepathy"`, "an unknown method")
	_, err = rx.arm(receiver.Options{Iface: "nope0"})
	wantKind(t, err, ErrHost, "arm nope0: ", "no such interface")
	if st := rx.state(); st.phase != phaseIdle {
		t.Errorf("after refusals: %s", st.phase)
	}

	// The role decides before anything else is tried.
	g, err := s.leases.acquire(bg, nobody, "c1", nil)
	if err != nil {
		t.Fatal(err)
	}
	wantKind(t, s.mayConfigure(bg, g.id), ErrRole, "configure: the agent's role is receiver, not a sender", "configure on a receiver")
	snd := unitService(t, RoleSender, fakeNetOS{})
	g, _ = snd.leases.acquire(bg, nobody, "c1", nil)
	_, err = snd.arm(bg, g.id, receiver.Options{})
	wantKind(t, err, ErrRole, "arm: the agent's role is sender, not a receiver", "arm on a sender")
	_, err = snd.arm(bg, "nope", receiver.Options{})
	wantKind(t, err, ErrNoLease, "lease_id: not the agent's current lease", "arm without the lease")
}

// An Arm whose receiver state (receiver.Options.MemoryBytes on the host's
// CPUs) is over the receiver's memory budget is refused with the numbers
// before any receiver starts, whatever the method (AF_PACKET, auto's
// fallback, counts as XDP does); at the budget it goes on to arm (and here
// fails only for the missing interface). Describe announces the budget of
// a receiver, none of a sender.
func TestArmOverBudget(t *testing.T) {
	s := unitService(t, RoleReceiver, fakeNetOS{addrs: map[string][]netip.Addr{"data0": addrs("198.18.0.2")}})
	if s.cfg.ReceiverMemory != DefaultReceiverMemory || s.describe(context.Background(), doctor.Options{}).receiverMemory != DefaultReceiverMemory {
		t.Errorf("budget %d, described %d, want the default %d", s.cfg.ReceiverMemory, s.describe(context.Background(), doctor.Options{}).receiverMemory, DefaultReceiverMemory)
	}
	cpus := s.inv.cpuCount()
	need := func(o receiver.Options) uint64 {
		n, err := o.MemoryBytes(cpus)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	s.cfg.ReceiverMemory = 256 << 20
	g, err := s.leases.acquire(bg, nobody, "c1", nil)
	if err != nil {
		t.Fatal(err)
	}
	// 34 streams × a window of 2^27 sequences (2^22 words × 8 bytes):
	// over 1088 MiB, whatever the run's length, for every method.
	for _, m := range receiver.Methods {
		o := receiver.Options{Iface: "data0", Method: m, MaxStreams: 34, Window: 1 << 27}
		_, err = s.arm(bg, g.id, o)
		wantKind(t, err, ErrBudget, fmt.Sprintf("arm: 34 streams × a window of 134217728 sequences on %d CPUs need %d MiB of receiver state, the receiver's budget is 256 MiB (--receiver-memory)", cpus, mib(need(o))), "34 streams of 2^27, "+string(m))
		if got := grpcCode(err); got != codes.ResourceExhausted {
			t.Errorf("code %v, want ResourceExhausted", got)
		}
	}
	// The defaults count: 32 streams of 2^21 are 16 MiB of windows and
	// their state on every CPU.
	def := need(receiver.Options{})
	s.cfg.ReceiverMemory = def - 1
	_, err = s.arm(bg, g.id, receiver.Options{Iface: "data0"})
	wantKind(t, err, ErrBudget, "arm: 32 streams × a window of 2097152 sequences on", "the defaults")
	_, err = s.arm(bg, g.id, receiver.Options{Iface: "data0", Repeats: 2})
	wantKind(t, err, ErrBudget, "arm: 32 streams × a window of 131072 sequences on", "the defaults with repeats")
	s.cfg.ReceiverMemory = def
	_, err = s.arm(bg, g.id, receiver.Options{Iface: "data0"})
	wantKind(t, err, ErrHost, "arm data0: ", "exactly at the budget")
	snd := unitService(t, RoleSender, fakeNetOS{})
	if m := snd.describe(context.Background(), doctor.Options{}).receiverMemory; m != 0 {
		t.Errorf("a sender describes a receiver budget of %d", m)
	}
}
