package doctor

import (
	"fmt"
	"strings"

	"github.com/linerate/linerate/internal/ethtool"
	"github.com/linerate/linerate/topology"
)

const (
	ringsRXWhy = "A receive ring holds the frames that arrive while the CPU is away (another queue's softirq, an interrupt, a scheduler tick): " +
		"a ring below its maximum drops a burst the CPU would have caught up with, and that loss is the host's, not the switch's."
	ringsTXWhy = "A transmit ring below its maximum fills during the generator's bursts: frames the XDP engine redirects into a full ring are dropped " +
		"at the sender and pktgen spins on a busy queue, so the sender's ring, not the path, sets the rate."
	// ringsResize is said with a fix: resizing is not free.
	ringsResize = " Most drivers reset the link to resize a ring: fix it before the run, not during one."
)

// ringsMax is what the rings fix writes for the role, and whether g
// differs from it: the receive ring at its maximum on a receiver, the
// transmit ring on a sender (both for a host that does both). A ring
// whose maximum the driver does not report (0) is left as it is; so are
// the mini and jumbo rings.
func ringsMax(g ethtool.Rings, r Role) (ethtool.Rings, bool) {
	w := g
	if r.receives() && w.RXMax > 0 {
		w.RX = w.RXMax
	}
	if r.sends() && w.TXMax > 0 {
		w.TX = w.TXMax
	}
	return w, w != g
}

// checkRings is WARN when the ring the role depends on is below its
// maximum (rx for a receiver, tx for a sender).
func checkRings(e *env) Check {
	c := Check{Title: "Ring sizes against their maximum"}
	switch e.o.Role {
	case RoleReceiver:
		c.Why = ringsRXWhy
	case RoleSender:
		c.Why = ringsTXWhy
	default:
		c.Why = ringsRXWhy + " " + ringsTXWhy
	}
	return paramCheck(e, c, "-g ", "ETHTOOL_GRINGPARAM", NIC.Rings, ethtool.Rings.String, func(g ethtool.Rings, c *Check) {
		w, warn := ringsMax(g, e.o.Role)
		if !warn {
			return
		}
		args := []string{"ethtool", "-G", e.o.Iface}
		var below []string
		if w.RX != g.RX {
			args = append(args, "rx", fmt.Sprint(w.RX))
			below = append(below, fmt.Sprintf("rx ring %d below its maximum %d", g.RX, g.RXMax))
		}
		if w.TX != g.TX {
			args = append(args, "tx", fmt.Sprint(w.TX))
			below = append(below, fmt.Sprintf("tx ring %d below its maximum %d", g.TX, g.TXMax))
		}
		lead(c, fmt.Sprintf("%s: %s (ethtool -g)", e.o.Iface, strings.Join(below, ", ")))
		c.Why += ringsResize
		warnFix(c, strings.Join(args, " "), FixRings)
	})
}

// fixRings sets the role's rings to their maximum where they are below.
func fixRings(e *env, j *journaler) error {
	return fixParam(e, j, topology.KindEthtoolRings, NIC.Rings, NIC.SetRings, func(g ethtool.Rings) (ethtool.Rings, bool) {
		return ringsMax(g, e.o.Role)
	})
}
