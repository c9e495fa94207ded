package agent

import (
	"testing"

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
	_, err := rx.collect(true)
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
	g, err := s.leases.acquire("c1", nil)
	if err != nil {
		t.Fatal(err)
	}
	wantKind(t, s.mayConfigure(g.id), ErrRole, "configure: the agent's role is receiver, not a sender", "configure on a receiver")
	snd := unitService(t, RoleSender, fakeNetOS{})
	g, _ = snd.leases.acquire("c1", nil)
	_, err = snd.arm(g.id, receiver.Options{})
	wantKind(t, err, ErrRole, "arm: the agent's role is sender, not a receiver", "arm on a sender")
	_, err = snd.arm("nope", receiver.Options{})
	wantKind(t, err, ErrNoLease, "lease_id: not the agent's current lease", "arm without the lease")
}
