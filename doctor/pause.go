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
	return paramCheck(e, c, "-a ", "ETHTOOL_GPAUSEPARAM", NIC.Pause, ethtool.Pause.String, func(p ethtool.Pause, c *Check) {
		if p != (ethtool.Pause{}) {
			warnFix(c, fmt.Sprintf("ethtool -A %s autoneg off rx off tx off", e.o.Iface), FixFlowControl)
		}
	})
}

// fixPause turns pause autoneg, rx and tx off where any is on.
func fixPause(e *env, j *journaler) error {
	return fixParam(e, j, topology.KindEthtoolPause, NIC.Pause, NIC.SetPause, func(p ethtool.Pause) (ethtool.Pause, bool) {
		return ethtool.Pause{}, p != ethtool.Pause{}
	})
}
