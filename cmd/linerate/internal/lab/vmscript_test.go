//go:build linux

package lab

import (
	"slices"
	"strings"
	"testing"
	"time"

	lrnetns "github.com/linerate/linerate/internal/netns"
)

// A VM sender of a lab with a delay sets its netem, read back by the
// lab's helper, before its agent starts, and a netem it cannot set ends
// the script there (the guest powers off, the lab fails naming it); a
// receiver, or a lab without a delay, starts the agent alone. Every VM
// host loads sch_netem.
func TestGuestScriptDelay(t *testing.T) {
	l := &Lab{Spec: Spec{Name: "x", Hosts: HostsVM, Delay: Delay{D: 20 * time.Millisecond, Jitter: time.Millisecond}}}
	s := &Host{Name: "s1", Role: "sender", Data: &lrnetns.Link{Name: "data0"}}
	r := &Host{Name: "r1", Role: "receiver", Data: &lrnetns.Link{Name: "data0"}}
	args := []string{"agent", "--role", "sender"}
	got := l.guestScript(s, args)
	netem := "'/bin/linerate' 'lab' 'netem' '--iface' 'data0' '--delay' '20ms,1ms' || exit 1\n"
	agent := "exec /bin/linerate 'agent' '--role' 'sender'\n"
	if i, j := strings.Index(got, netem), strings.Index(got, agent); i < 0 || j < i {
		t.Errorf("sender's script:\n%s\nwant %q before %q", got, netem, agent)
	}
	if got := l.guestScript(r, args); strings.Contains(got, "netem") {
		t.Errorf("receiver's script sets a netem:\n%s", got)
	}
	l.Spec.Delay = Delay{}
	if got := l.guestScript(s, args); strings.Contains(got, "netem") {
		t.Errorf("a lab without a delay sets a netem:\n%s", got)
	}
	if !slices.Contains(vmModules, "sch_netem") {
		t.Errorf("VM hosts load %v: no sch_netem", vmModules)
	}
}
