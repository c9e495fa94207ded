//go:build linux

package lab

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/linerate/linerate/coordinator/campaign"
	"github.com/linerate/linerate/pktgen"
)

// A shaped lab of namespaces fails a trial its senders fell short of,
// whatever the campaign says; unshaped, or of VM hosts, the campaign's
// own choice stands.
func TestSpecShortfall(t *testing.T) {
	for _, tt := range []struct {
		spec        Spec
		given, want campaign.Shortfall
	}{
		{Spec{ShapeBPS: 200e6}, "", campaign.ShortfallFail},
		{Spec{ShapeBPS: 200e6, Hosts: HostsNetns}, campaign.ShortfallInvalid, campaign.ShortfallFail},
		{Spec{ShapeBPS: 200e6, Hosts: HostsVM}, campaign.ShortfallInvalid, campaign.ShortfallInvalid},
		{Spec{ShapeBPS: 200e6, Hosts: HostsVM}, "", ""},
		{Spec{Hosts: HostsNetns}, campaign.ShortfallInvalid, campaign.ShortfallInvalid},
		{Spec{}, campaign.ShortfallFail, campaign.ShortfallFail},
	} {
		if got := tt.spec.Shortfall(tt.given); got != tt.want {
			t.Errorf("%+v, campaign's %q: %q, want %q", tt.spec, tt.given, got, tt.want)
		}
	}
}

// The hosts are named by role and number, as their agents join.
func TestSpecHostNames(t *testing.T) {
	s := Spec{Senders: 2, Receivers: 3}
	if got := fmt.Sprint(s.SenderNames(), s.ReceiverNames()); got != "[s1 s2] [r1 r2 r3]" {
		t.Errorf("names %s", got)
	}
}

// Up, a lab says how to reach its agents; down, what was removed.
func TestLabTexts(t *testing.T) {
	s := &Session{Lab: &Lab{Spec: Spec{Name: "lab", Senders: 2, Receivers: 1}},
		Agents: &Cluster{Dir: "/run/linerate/lab-lab", TLSDir: "/run/linerate/lab-lab/tls", GossipKey: "/k", Join: []string{"198.19.0.1:7946"}, Bind: "198.19.0.254:0"}}
	var b strings.Builder
	if err := s.WriteUp(&b); err != nil {
		t.Fatal(err)
	}
	flags := "--join 198.19.0.1:7946 --bind 198.19.0.254:0 --gossip-key /k --tls-dir /run/linerate/lab-lab/tls"
	want := "lab lab up: 2 senders (s1…), 1 receivers (r1…); directory /run/linerate/lab-lab\n" +
		"  linerate members " + flags + "\n" +
		"  linerate run " + flags + " --senders s1,s2 --receivers r1 --duration 3s\n" +
		"Ctrl-C removes the lab.\n"
	if b.String() != want {
		t.Errorf("up:\n%s\nwant:\n%s", b.String(), want)
	}
	if got := (Removed{Namespaces: []string{"a", "b"}}).String(); got != "removed: 2 namespaces" {
		t.Errorf("down: %q", got)
	}
	if got := (Removed{Namespaces: []string{"a"}, VMs: []string{"s1", "r1"}}).String(); got != "removed: 1 namespaces, 2 VM hosts stopped (s1, r1)" {
		t.Errorf("down with VMs: %q", got)
	}
}

// A run on a lab with a delay sends through the senders' netem
// (queue_xmit), given that or nothing, and refuses start_xmit, which
// would pass the netem by; without a delay the run's own choice stands.
func TestSpecXmitMode(t *testing.T) {
	delayed := Spec{Hosts: HostsVM, Delay: Delay{D: 20 * time.Millisecond}}
	for _, tt := range []struct {
		spec        Spec
		given, want pktgen.XmitMode
		err         string
	}{
		{delayed, "", pktgen.XmitQueue, ""},
		{delayed, pktgen.XmitQueue, pktgen.XmitQueue, ""},
		{delayed, pktgen.XmitStart, "", "xmit mode start_xmit with the lab's delay 20ms: its frames would pass the senders' netem by; want queue_xmit"},
		{Spec{Hosts: HostsVM}, "", "", ""},
		{Spec{}, pktgen.XmitStart, pktgen.XmitStart, ""},
	} {
		got, err := tt.spec.XmitMode(tt.given)
		if got != tt.want || (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("delay %s, given %q: %q, %v; want %q, %q", tt.spec.Delay, tt.given, got, err, tt.want, tt.err)
		}
	}
}
