package gossip

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/memberlist"

	"github.com/linerate/linerate/internal/enum"
)

// Role is what a member of the cluster does: an agent sends, receives or
// both; a coordinator drives the agents.
type Role string

// The roles a member announces in its "role" tag.
const (
	RoleSender      Role = "sender"
	RoleReceiver    Role = "receiver"
	RoleBoth        Role = "both"
	RoleCoordinator Role = "coordinator"
)

// AgentRoles are the roles an agent may run as: the one list its
// validator, errors and flag help say.
var AgentRoles = []Role{RoleSender, RoleReceiver, RoleBoth}

// ParseAgentRole reads an agent's role, one of AgentRoles.
func ParseAgentRole(s string) (Role, error) {
	if r := Role(s); slices.Contains(AgentRoles, r) {
		return r, nil
	}
	return "", fmt.Errorf("role %q: valid roles are %s", s, enum.And(AgentRoles))
}

// Sends tells whether a member of role r runs senders.
func (r Role) Sends() bool { return r == RoleSender || r == RoleBoth }

// Receives tells whether a member of role r runs a receiver.
func (r Role) Receives() bool { return r == RoleReceiver || r == RoleBoth }

// MemberEvent is serf's name of a membership change.
type MemberEvent string

// The membership events serf reports.
const (
	EventJoin   MemberEvent = "member-join"
	EventLeave  MemberEvent = "member-leave"
	EventFailed MemberEvent = "member-failed"
	EventUpdate MemberEvent = "member-update"
	EventReap   MemberEvent = "member-reap"
)

// Ends tells whether the event takes the member out of the cluster (it
// left or failed): a run that uses it cannot go on.
func (e MemberEvent) Ends() bool { return e == EventLeave || e == EventFailed || e == EventReap }

// MaxTagBytes is serf's limit on a member's encoded tags
// (memberlist.MetaMaxSize).
const MaxTagBytes = memberlist.MetaMaxSize

// The tag keys, as they go over the wire.
const (
	tagRole     = "role"
	tagGRPC     = "grpc"
	tagIface    = "iface"
	tagNUMA     = "numa"
	tagQueues   = "queues"
	tagSpeed    = "speed"
	tagBackends = "backend"
	tagVersion  = "version"
	tagDataIPs  = "ips"
	tagDataMAC  = "mac"
)

// Tags is what a member announces over serf: compact facts for discovery
// and for the senders' destination check; details come over gRPC
// Describe. Encode and DecodeTags are the only code that knows the keys.
type Tags struct {
	Role Role
	// GRPC is the address:port of the member's Agent service.
	GRPC  string
	Iface string
	// NUMA is the data NIC's NUMA node (-1: unknown or none).
	NUMA      int
	Queues    int
	SpeedMbps int64
	// Backends are the sender backends the host can run now.
	Backends []string
	Version  string
	// DataIPs are a receiver's data addresses (the first IPv4 and the
	// first IPv6 that is not link-local), DataMAC its data MAC: what a
	// sender checks its destinations against.
	DataIPs []netip.Addr
	DataMAC net.HardwareAddr
}

// CoordinatorTags are the tags of a coordinator: its role alone.
func CoordinatorTags() Tags { return Tags{Role: RoleCoordinator, NUMA: -1} }

// Encode is the tags as serf carries them. It fails when they would not
// fit serf's limit.
func (t Tags) Encode() (map[string]string, error) {
	m := t.encode()
	if n := EncodedBytes(m); n >= MaxTagBytes {
		return nil, fmt.Errorf("serf tags take %d bytes, serf allows fewer than %d: shorten the version or addresses", n, MaxTagBytes)
	}
	return m, nil
}

// encode is the tags as serf carries them, whatever their size.
func (t Tags) encode() map[string]string {
	m := map[string]string{tagRole: string(t.Role)}
	if t.Role != RoleCoordinator {
		m[tagGRPC] = t.GRPC
		m[tagIface] = t.Iface
		m[tagNUMA] = strconv.Itoa(t.NUMA)
		m[tagQueues] = strconv.Itoa(t.Queues)
		m[tagSpeed] = strconv.FormatInt(t.SpeedMbps, 10)
		m[tagBackends] = strings.Join(t.Backends, ",")
		m[tagVersion] = t.Version
	}
	if ips := dataIPs(t.DataIPs); ips != "" {
		m[tagDataIPs] = ips
	}
	if len(t.DataMAC) > 0 {
		m[tagDataMAC] = t.DataMAC.String()
	}
	return m
}

// dataIPs is the first IPv4 and the first IPv6 address of ips that are
// not link-local, comma-separated.
func dataIPs(ips []netip.Addr) string {
	var v4, v6 string
	for _, a := range ips {
		if !a.IsValid() || a.IsLinkLocalUnicast() {
			continue
		}
		a = a.Unmap()
		switch {
		case a.Is4() && v4 == "":
			v4 = a.String()
		case a.Is6() && v6 == "":
			v6 = a.WithZone("").String()
		}
	}
	return strings.Trim(v4+","+v6, ",")
}

// DecodeTags reads a member's tags. It is lenient, as gossip from an
// older or newer version may be: a missing or malformed value reads as
// its zero (NUMA as -1).
func DecodeTags(m map[string]string) Tags {
	atoi := func(k string, def int) int {
		n, err := strconv.Atoi(m[k])
		if err != nil {
			return def
		}
		return n
	}
	t := Tags{
		Role: Role(m[tagRole]), GRPC: m[tagGRPC], Iface: m[tagIface], NUMA: atoi(tagNUMA, -1),
		Queues: atoi(tagQueues, 0), Version: m[tagVersion],
	}
	t.SpeedMbps, _ = strconv.ParseInt(m[tagSpeed], 10, 64)
	if b := m[tagBackends]; b != "" {
		t.Backends = strings.Split(b, ",")
	}
	for _, s := range strings.Split(m[tagDataIPs], ",") {
		if a, err := netip.ParseAddr(s); err == nil {
			t.DataIPs = append(t.DataIPs, a.Unmap().WithZone(""))
		}
	}
	t.DataMAC, _ = net.ParseMAC(m[tagDataMAC])
	return t
}

// Selectable is the tags as a campaign's agent selector matches them
// (`select: {iface: data0, numa: "1"}`): every key Encode writes, by the
// same name and text, except the data addresses.
func (t Tags) Selectable() map[string]string {
	m := t.encode() // the size limit is the wire's, not the selector's
	delete(m, tagDataIPs)
	delete(m, tagDataMAC)
	return m
}

// EncodedBytes bounds the msgpack encoding of tags from above: a magic
// byte, a map header, and per string a header of at most 5 bytes.
func EncodedBytes(t map[string]string) int {
	n := 1 + 5
	for k, v := range t {
		n += 5 + len(k) + 5 + len(v)
	}
	return n
}
