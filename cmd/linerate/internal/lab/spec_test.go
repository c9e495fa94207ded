//go:build linux

package lab

import (
	"fmt"
	"testing"
)

// A shaped lab of namespaces fails a trial its senders fell short of,
// whatever the campaign says; unshaped, or of VM hosts, the campaign's
// own choice stands.
func TestSpecShortfall(t *testing.T) {
	for _, tt := range []struct {
		spec        Spec
		given, want string
	}{
		{Spec{ShapeBPS: 200e6}, "", "fail"},
		{Spec{ShapeBPS: 200e6, Hosts: HostsNetns}, "invalid", "fail"},
		{Spec{ShapeBPS: 200e6, Hosts: HostsVM}, "invalid", "invalid"},
		{Spec{ShapeBPS: 200e6, Hosts: HostsVM}, "", ""},
		{Spec{Hosts: HostsNetns}, "invalid", "invalid"},
		{Spec{}, "fail", "fail"},
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
