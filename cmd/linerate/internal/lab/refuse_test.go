//go:build linux

package lab

import (
	"slices"
	"testing"
	"time"
)

func TestLabBadSpec(t *testing.T) {
	for _, s := range []Spec{{Name: "", Senders: 1, Receivers: 1}, {Name: "a-b", Senders: 1, Receivers: 1}, {Name: "x", Senders: 0, Receivers: 1},
		{Name: "..", Senders: 1, Receivers: 1}, {Name: "a/../b", Senders: 1, Receivers: 1}, {Name: "abcdefghijkl", Senders: 1, Receivers: 1, Mgmt: true}} {
		if _, err := Up(s, nil); err == nil {
			t.Errorf("spec %+v accepted", s)
		}
	}
}

// RemoveLab builds no path from a name Up would refuse: the directory
// it removes is always one under /run/linerate.
func TestRemoveLabRefusesBadNames(t *testing.T) {
	for _, name := range []string{"x/../../..", "..", "a b", "a-b"} {
		if _, err := RemoveLab(name, nil); err == nil {
			t.Errorf("RemoveLab(%q) accepted the name", name)
		}
	}
}

// A spec built without the command's flags (a campaign's lab, a test)
// is checked the same: shaping, loss and queues out of range are
// refused before anything is made.
func TestLabBadSpecKnobs(t *testing.T) {
	ok := Spec{Name: "x", Senders: 1, Receivers: 1}
	for _, mod := range []func(*Spec){
		func(s *Spec) { s.ShapeBPS = 7999 },
		func(s *Spec) { s.ShapeBPS = 401e9 },
		func(s *Spec) { s.Loss.Every = 1 },
		func(s *Spec) { s.Loss.BasisPoints = 10001 },
		func(s *Spec) { s.Loss = Loss{Every: 10, BasisPoints: 5} },
		func(s *Spec) { s.Queues = 65 },
		func(s *Spec) { s.Hosts = "xen" },
		func(s *Spec) { s.VCPUs = 4 }, // netns hosts have no vCPUs
		func(s *Spec) { s.Hosts, s.VCPUs = HostsVM, 3 },
		func(s *Spec) { s.Hosts, s.Queues = HostsVM, 5 }, // more queues than the default 4 vCPUs
		func(s *Spec) { s.Hosts, s.Senders, s.Receivers = HostsVM, 9, 8 },
		func(s *Spec) { s.Delay.D = 20 * time.Millisecond }, // netns hosts: the host kernel has no netem
		func(s *Spec) { s.Hosts, s.Delay.D = HostsVM, -time.Millisecond },
		func(s *Spec) { s.Hosts, s.Delay.D = HostsVM, MaxDelay+time.Microsecond },
		func(s *Spec) { s.Hosts, s.Delay = HostsVM, Delay{D: time.Millisecond, Jitter: 2 * time.Millisecond} },
	} {
		s := ok
		mod(&s)
		if err := s.Validate(); err == nil {
			t.Errorf("spec %+v accepted", s)
		}
	}
	vmOK := ok
	vmOK.Hosts = HostsVM // 4 vCPUs, 4 queues
	delayed := vmOK
	delayed.Delay = Delay{D: MaxDelay, Jitter: MaxDelay}
	for _, s := range []Spec{ok, vmOK, delayed} {
		if err := s.Validate(); err != nil {
			t.Errorf("spec %+v refused: %v", s, err)
		}
	}
	if l := vmOK.Layout(); l.VCPUs != DefaultVCPUs || l.Queues != DefaultVMQueues {
		t.Errorf("VM layout defaults: %+v", l)
	}
}

// Agents join up to three hosts started before them, so a big lab's
// joins spread over its first hosts instead of all landing on one.
func TestSeedsFor(t *testing.T) {
	hosts := []string{"a:7946", "b:7946", "c:7946", "d:7946", "e:7946"}
	for i, want := range [][]string{{}, {"a:7946"}, {"a:7946", "b:7946"}, {"a:7946", "b:7946", "c:7946"}, {"a:7946", "b:7946", "c:7946"}} {
		if got := seedsFor(hosts, i); !slices.Equal(got, want) {
			t.Errorf("host %d joins %v, want %v", i, got, want)
		}
	}
}
