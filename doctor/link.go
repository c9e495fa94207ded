package doctor

import (
	"fmt"

	"github.com/linerate/linerate/internal/ethtool"
)

const linkWhy = "The report's line rate is the link's speed: a link that is not at full duplex and a known speed makes every rate in the report " +
	"a fraction of the wrong figure, and a half-duplex link loses and delays frames itself (collisions, back-off)."

// checkLink judges the link's speed, duplex and auto-negotiation: half
// duplex is a FAIL; an unknown speed on an interface with a device is a
// WARN (a link that is down, a virtio NIC told no speed, a driver that
// exposes no link settings); a virtual interface (veth, a bridge) is a
// PASS that says its speed is nominal.
func checkLink(e *env) Check {
	c := Check{Title: "Link speed, duplex and auto-negotiation", Why: linkWhy}
	iface := e.o.Iface
	l, call, ok := readParam(e, &c, "", "ETHTOOL_GLINKSETTINGS", NIC.Link)
	if !ok {
		c.Evidence = append(c.Evidence, e.evidence("/sys/class/net/"+iface+"/speed"))
		// A driver without link settings passes on a virtual interface
		// (ethtoolUnread), but a device's speed is then unknown: the
		// report's line rate has no figure to be a fraction of.
		if c.Status == Pass && !e.virtual() {
			c.Status = Warn
			c.Evidence = append([]string{fmt.Sprintf("%s: a device whose driver exposes no link settings: its speed is unknown", iface)}, c.Evidence...)
			c.Fix = fmt.Sprintf("update the NIC's driver or firmware (ethtool -i %s names them) until ethtool %s shows the link's speed; until then read it from the switch port", iface, iface)
		}
		return c
	}
	c.Evidence = append(c.Evidence, call+": "+l.String())
	if e.virtual() {
		c.Status = Pass
		c.Evidence = append(c.Evidence, fmt.Sprintf("%s has no device (/sys/class/net/%s/device): a virtual interface, whose speed is nominal; its rate is the CPU's", iface, iface))
		return c
	}
	switch {
	case l.Duplex == "half":
		c.Status = Fail
		c.Fix = fmt.Sprintf("ethtool -s %s duplex full autoneg on; if it comes up at half duplex again, check the cable and the switch port", iface)
		return c
	case l.SpeedMbps <= 0 || l.Duplex != "full":
		c.Status = Warn
		c.Evidence = append(c.Evidence, e.evidence("/sys/class/net/"+iface+"/operstate"))
		c.Fix = unknownSpeedFix(e, l)
		return c
	}
	c.Status = Pass
	return c
}

// unknownSpeedFix is the fix for a link of unknown speed or duplex: a
// virtio NIC reports whatever speed it is told; any other is down or not
// negotiated.
func unknownSpeedFix(e *env, l ethtool.Link) string {
	if e.nic != nil && e.nic.Driver == "virtio_net" {
		return fmt.Sprintf("ethtool -s %s speed <the host link's Mb/s> duplex full (virtio_net reports the speed it is given)", e.o.Iface)
	}
	return fmt.Sprintf("ip link set %s up, then check the cable, the transceiver and the switch port (a link of unknown speed is down or not negotiated)", e.o.Iface)
}
