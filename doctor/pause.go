package doctor

import (
	"fmt"

	"github.com/linerate/linerate/internal/ethtool"
	"github.com/linerate/linerate/topology"
)

// pauseWhy is the same for a receiver and a sender: either end of a
// link can turn loss into back-pressure.
const pauseWhy = "With flow control on, a receiver that cannot keep up sends pause frames and the sender (or the switch port before it) " +
	"stops instead of dropping: the host's own limit shows as a lower rate with no loss, and frames the switch would drop are held back instead. " +
	"With it off, every frame the path cannot carry is counted as lost, where it was lost."

// checkPause is WARN when any of pause autoneg, rx or tx is on, for every
// role; a driver without pause parameters (veth) is a PASS.
func checkPause(e *env) Check {
	c := Check{Title: "Ethernet flow control (pause autoneg, rx, tx)", Why: pauseWhy}
	call := fmt.Sprintf("ethtool -a %s (ETHTOOL_GPAUSEPARAM)", e.o.Iface)
	nic, err := e.nicOrErr()
	if err != nil {
		return ethtoolUnread(c, call, err)
	}
	p, err := nic.Pause()
	if err != nil {
		return ethtoolUnread(c, call, err)
	}
	c.Evidence = append(c.Evidence, call+": "+p.String())
	if p == (ethtool.Pause{}) {
		c.Status = Pass
		return c
	}
	c.Status = Warn
	c.Fix = fmt.Sprintf("ethtool -A %s autoneg off rx off tx off", e.o.Iface)
	c.FixClass = FixFlowControl
	return c
}

// fixPause turns pause autoneg, rx and tx off where any is on.
func fixPause(e *env, j *journaler) error {
	nic, err := e.nicOrErr()
	if err != nil {
		return err
	}
	p, err := nic.Pause()
	switch {
	case isNotSupported(err):
		return nil // nothing to turn off: the check says the driver has none
	case err != nil:
		return err
	case p == ethtool.Pause{}:
		return nil
	}
	return changeJSON(e, j, topology.KindEthtoolPause, p, nic.Pause, nic.SetPause, ethtool.Pause{})
}
