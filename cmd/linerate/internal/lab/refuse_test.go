//go:build linux

package lab

import (
	"slices"
	"strings"
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
		func(s *Spec) { s.Hosts, s.Delay.D, s.Both = HostsVM, 20*time.Millisecond, true }, // the reverse way has no netem
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

// --delay takes D or D,JITTER and prints it back as given; it refuses,
// naming the bound, a negative delay or jitter, a delay over 10 s, a
// jitter over the delay, a part of a microsecond and what is no duration.
func TestParseDelay(t *testing.T) {
	valid := map[string]Delay{
		"20ms":            {D: 20 * time.Millisecond},
		"20ms,1ms":        {D: 20 * time.Millisecond, Jitter: time.Millisecond},
		" 1.5ms , 250us ": {D: 1500 * time.Microsecond, Jitter: 250 * time.Microsecond},
		"10s,10s":         {D: MaxDelay, Jitter: MaxDelay},
		"0":               {},
	}
	for in, want := range valid {
		got, err := ParseDelay(in)
		if back, berr := ParseDelay(got.String()); err != nil || got != want || berr != nil || back != got {
			t.Errorf("ParseDelay(%q) = %+v, %v, printed %q reads back %+v, %v; want %+v", in, got, err, got, back, berr, want)
		}
	}
	refused := map[string]string{
		"-1ms":      "want a delay and jitter of 0 or more",
		"20ms,-1ms": "want a delay and jitter of 0 or more",
		"10001ms":   "want at most 10s",
		"1ms,2ms":   "the jitter 2ms is larger than the delay 1ms: want jitter ≤ delay",
		"1500ns":    "netem counts whole microseconds",
		"soon":      "want D or D,JITTER",
		"":          "want D or D,JITTER",
		"20ms,":     `jitter "": want a duration`,
	}
	for in, want := range refused {
		if _, err := ParseDelay(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseDelay(%q): %v, want %q", in, err, want)
		}
	}
	if !(Delay{}).IsZero() || (Delay{D: 1}).IsZero() || (Delay{D: 20 * time.Millisecond, Jitter: time.Millisecond}).String() != "20ms,1ms" {
		t.Error("IsZero or String")
	}
}
