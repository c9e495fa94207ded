package gossip

import (
	"net"
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

func TestTagsRoundTrip(t *testing.T) {
	mac, _ := net.ParseMAC("02:00:00:00:00:02")
	in := Tags{
		Role: RoleReceiver, GRPC: "198.19.0.2:7947", Iface: "data0", NUMA: 1, Queues: 4, SpeedMbps: 10000,
		Backends: []string{"xdp", "afpacket"}, Version: "v1.2.3",
		DataIPs: []netip.Addr{netip.MustParseAddr("fe80::1"), netip.MustParseAddr("198.18.0.2"), netip.MustParseAddr("198.18.0.3"), netip.MustParseAddr("2001:2::2")},
		DataMAC: mac,
	}
	m, err := in.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if m["ips"] != "198.18.0.2,2001:2::2" {
		t.Errorf("ips tag %q: want the first IPv4 and the first IPv6 that is not link-local", m["ips"])
	}
	got := DecodeTags(m)
	want := in
	want.DataIPs = []netip.Addr{netip.MustParseAddr("198.18.0.2"), netip.MustParseAddr("2001:2::2")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, want)
	}
	sel := in.Selectable()
	for _, k := range []string{"role", "grpc", "iface", "numa", "queues", "speed", "backend", "version"} {
		if _, ok := sel[k]; !ok {
			t.Errorf("Selectable lacks %q", k)
		}
	}
	if _, ok := sel["ips"]; ok {
		t.Error("Selectable carries the data addresses")
	}
}

func TestTagsCoordinator(t *testing.T) {
	m, err := CoordinatorTags().Encode()
	if err != nil || len(m) != 1 || m["role"] != "coordinator" {
		t.Fatalf("coordinator tags %v, %v: want only role=coordinator", m, err)
	}
	if d := DecodeTags(m); d.Role != RoleCoordinator || d.NUMA != -1 {
		t.Errorf("decoded %+v", d)
	}
}

func TestTagsDecodeLenient(t *testing.T) {
	d := DecodeTags(map[string]string{"role": "sender", "numa": "x", "queues": "-", "speed": "fast", "ips": "nope,198.18.0.1", "mac": "zz"})
	if d.Role != RoleSender || d.NUMA != -1 || d.Queues != 0 || d.SpeedMbps != 0 || len(d.DataMAC) != 0 ||
		len(d.DataIPs) != 1 || d.DataIPs[0] != netip.MustParseAddr("198.18.0.1") {
		t.Errorf("lenient decode: %+v", d)
	}
}

func TestTagsTooLarge(t *testing.T) {
	big := Tags{Role: RoleSender, Iface: "data0", Version: strings.Repeat("v", MaxTagBytes)}
	_, err := big.Encode()
	if err == nil || !strings.Contains(err.Error(), "serf allows fewer than") {
		t.Fatalf("oversized tags: %v", err)
	}
	// The limit is the wire's: a selector still sees every tag.
	if sel := big.Selectable(); sel["iface"] != "data0" || sel["role"] != "sender" {
		t.Errorf("Selectable of tags over the wire's limit: %v", sel)
	}
}

func TestParseAgentRole(t *testing.T) {
	for _, r := range AgentRoles {
		if got, err := ParseAgentRole(string(r)); err != nil || got != r {
			t.Errorf("ParseAgentRole(%q) = %q, %v", r, got, err)
		}
	}
	if _, err := ParseAgentRole("coordinator"); err == nil || !strings.Contains(err.Error(), "sender, receiver and both") {
		t.Errorf("coordinator as an agent role: %v", err)
	}
	if !RoleBoth.Sends() || !RoleBoth.Receives() || RoleSender.Receives() || RoleReceiver.Sends() {
		t.Error("Sends/Receives")
	}
	if !EventFailed.Ends() || !EventLeave.Ends() || EventJoin.Ends() || EventUpdate.Ends() {
		t.Error("MemberEvent.Ends")
	}
}
