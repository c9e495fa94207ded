package agent

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/linerate/linerate/pktgen"
)

// The request rails: what every request passes whoever sends it, on top
// of the destination rails (safety.go). An interface field names the
// agent's own --iface or nothing; a sender's frames carry its device's
// own source MAC (or one of --allow-src-mac), a VLAN tag only from
// --allow-vlan, and never a group (multicast or broadcast) destination
// MAC; no pktgen flag randomises a MAC or a VLAN past these checks.

// MinAllowDstBits is the shortest --allow-dst prefix an agent takes
// without AllowDstAny: a shorter one (0.0.0.0/0, ::/0, 10.0.0.0/7 …)
// covers so much that it would let a sender flood any host.
const MinAllowDstBits = 8

// randomFlags are the pktgen flags that would randomise what the rails
// check (source and destination MACs, VLAN ids): refused over the API.
var randomFlags = map[string]string{
	"MACSRC_RND": "random source MACs (config.src_mac is checked against the device's)",
	"MACDST_RND": "random destination MACs (config.dst_mac is checked against the receiver's, and group MACs are refused)",
	"VID_RND":    "random VLAN ids (config.vlan_id is checked against --allow-vlan)",
	"SVID_RND":   "random service VLAN ids (only --allow-vlan tags are sent)",
}

// checkIface refuses an interface field (field, as the request names it)
// naming another interface than the agent's own: the agent owns its
// --iface and nothing else on the host.
func checkIface(field, value, own string) error {
	if value == "" || value == own {
		return nil
	}
	return failf(ErrInvalid, "%s %q: this agent owns only its --iface %s: give %s or leave %s empty", field, value, own, own, field)
}

// frameRails are the agent's allowances for a sender's frames.
type frameRails struct {
	srcMACs []net.HardwareAddr // --allow-src-mac: source MACs besides the device's own
	vlans   []int              // --allow-vlan: the VLAN ids a sender may tag
}

// check refuses cfg's frames where the rails do not allow them; own is
// the device's MAC (nil without one).
func (r frameRails) check(cfg *pktgen.Config, own net.HardwareAddr) error {
	for _, f := range cfg.Flags {
		if why, ok := randomFlags[f]; ok {
			return failf(ErrInvalid, "config.flags %s: %s would bypass the agent's safety rails; not accepted over the API", f, why)
		}
	}
	if err := checkUnicast("config.dst_mac", cfg.DstMAC); err != nil {
		return err
	}
	for i, d := range cfg.ThreadDst {
		if err := checkUnicast(fmt.Sprintf("config.thread_dst[%d].mac", i), d.MAC); err != nil {
			return err
		}
	}
	if len(cfg.SrcMAC) > 0 && !bytes.Equal(cfg.SrcMAC, own) && !slices.ContainsFunc(r.srcMACs, func(m net.HardwareAddr) bool { return bytes.Equal(m, cfg.SrcMAC) }) {
		return failf(ErrRefused, "config.src_mac %s: not %s's own MAC %s%s; leave src_mac empty to send from %s, or start the sender agent with --allow-src-mac %s",
			cfg.SrcMAC, cfg.Device, macOrNone(own), allowedMACs(r.srcMACs), macOrNone(own), cfg.SrcMAC)
	}
	if cfg.HasVLAN {
		return r.checkVLAN("config.vlan_id", cfg.VLANID, "send", "sender")
	}
	return nil
}

// checkVLAN refuses a tag id the rails do not allow, named by field; do
// is what the agent would do untagged instead and role the agent's role
// the operator would start with --allow-vlan.
func (r frameRails) checkVLAN(field string, id int, do, role string) error {
	if slices.Contains(r.vlans, id) {
		return nil
	}
	return failf(ErrRefused, "%s %d: %s; %s untagged, or start the %s agent with --allow-vlan %d", field, id, allowedVLANs(r.vlans), do, role, id)
}

// checkReflectVLAN refuses a reflection tag (receiver.Options.ReflectVLAN:
// the receiver sends its reflections on that VLAN) the rails do not
// allow, as a sender's tag is refused.
func (r frameRails) checkReflectVLAN(vlan int) error {
	if vlan == 0 {
		return nil
	}
	return r.checkVLAN("reflect_vlan", vlan, "reflect", "receiver")
}

// checkUnicast refuses a group MAC (the I/G bit set: multicast and
// broadcast), whatever --allow-dst allows: a line-rate broadcast or
// multicast storm reaches every host of the segment.
func checkUnicast(field string, mac net.HardwareAddr) error {
	if len(mac) == 0 || mac[0]&1 == 0 {
		return nil
	}
	what := "a multicast"
	if bytes.Equal(mac, net.HardwareAddr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}) {
		what = "the broadcast"
	}
	return failf(ErrInvalid, "%s %s: %s MAC (group bit set): a sender sends only to one receiver's unicast MAC (its Describe's nic.mac)", field, mac, what)
}

func macOrNone(m net.HardwareAddr) string {
	if len(m) == 0 {
		return "(none)"
	}
	return m.String()
}

func allowedMACs(ms []net.HardwareAddr) string {
	if len(ms) == 0 {
		return " (no --allow-src-mac)"
	}
	var ss []string
	for _, m := range ms {
		ss = append(ss, m.String())
	}
	return " nor one of --allow-src-mac " + strings.Join(ss, ",")
}

func allowedVLANs(vs []int) string {
	if len(vs) == 0 {
		return "the agent allows no VLAN (no --allow-vlan)"
	}
	return "not in the agent's --allow-vlan " + idRanges(vs)
}

// idRanges lists ids as their runs: 100-199,300.
func idRanges(vs []int) string {
	vs = slices.Sorted(slices.Values(vs))
	vs = slices.Compact(vs)
	var ss []string
	for i := 0; i < len(vs); {
		j := i
		for j+1 < len(vs) && vs[j+1] == vs[j]+1 {
			j++
		}
		if j == i {
			ss = append(ss, strconv.Itoa(vs[i]))
		} else {
			ss = append(ss, fmt.Sprintf("%d-%d", vs[i], vs[j]))
		}
		i = j + 1
	}
	return strings.Join(ss, ",")
}

// broadDst are the prefixes of allow shorter than MinAllowDstBits.
func broadDst(allow []netip.Prefix) []string {
	var out []string
	for _, p := range allow {
		if p.Bits() < MinAllowDstBits {
			out = append(out, p.String())
		}
	}
	return out
}

// checkRailsConfig refuses an agent configuration whose rails are out of
// range or open to everything without saying so (AllowDstAny).
func checkRailsConfig(c *Config) error {
	if broad := broadDst(c.AllowDst); len(broad) > 0 && !c.AllowDstAny {
		return fmt.Errorf("--allow-dst %s: a prefix shorter than /%d covers so much that a sender could flood any host: "+
			"give the test network's CIDR (such as 198.18.0.0/15), or add --allow-dst-any to allow it anyway", strings.Join(broad, ","), MinAllowDstBits)
	}
	for _, p := range c.AllowDst {
		if p.Bits() >= linkLocal6.Bits() && linkLocal6.Contains(p.Addr()) {
			return fmt.Errorf("--allow-dst %s: IPv6 link-local (fe80::/10), which is never a test destination: give the test network's global or unique-local prefix (such as 2001:2::/48)", p)
		}
	}
	for _, v := range c.AllowVLANs {
		if v < 0 || v > 4095 {
			return fmt.Errorf("--allow-vlan %d: want a VLAN id 0-4095", v)
		}
	}
	for _, m := range c.AllowSrcMACs {
		if len(m) != 6 {
			return fmt.Errorf("--allow-src-mac %s: want an Ethernet MAC such as 02:00:00:00:00:01", m)
		}
		if m[0]&1 != 0 {
			return fmt.Errorf("--allow-src-mac %s: a group MAC (multicast or broadcast) is never a source: want a unicast MAC", m)
		}
	}
	return nil
}

// checkRails are the rails at Start: a sender (or both) on a management
// interface is refused; a receiver there only warned, since every Arm and
// Tune checks again and will be refused; --allow-dst-any warned.
func (a *Agent) checkRails(ctx context.Context) error {
	if a.cfg.AllowDstAny {
		broad := strings.Join(broadDst(a.cfg.AllowDst), ",")
		if broad == "" {
			broad = "(none: every --allow-dst prefix is /8 or longer)"
		}
		a.log.Warn("--allow-dst-any: a sender of this agent may send to every host of these --allow-dst prefixes, dst_mac unchecked", "prefixes", broad)
	}
	if a.svc.sends() {
		return a.svc.mgmt.check(ctx, useSend)
	}
	if err := a.svc.mgmt.check(ctx, useArm); err != nil {
		a.log.Warn("the receiver's data interface fails the management rail: every Arm and Tune will be refused", "error", err)
	}
	return nil
}
