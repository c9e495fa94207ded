package doctor

import (
	"fmt"
	"strings"

	"github.com/linerate/linerate/internal/ethtool"
	"github.com/linerate/linerate/topology"
)

// coalesceUsecsMax is the most rx-usecs the check lets pass. A receiver
// that waits rx-usecs before it interrupts adds up to that much to every
// delay it measures at rates below its interrupt limit. Up to 10 µs the
// wait is within what the measurement's own software timestamps spread
// (pktgen stamps a frame before the driver queues it, the receiver after
// an interrupt and a NAPI poll: each a few µs of scheduling), and it
// leaves alone Intel's small values that select a mode rather than a wait
// (e1000e and igb: 1 dynamic, 3 dynamic conservative; ixgbe: 1 dynamic).
// Above it, the receiver's wait is as large as what a store-and-forward
// switch port adds at 1 Gb/s (12.3 µs for a 1518-byte frame), and the
// latency reported is the NIC's rather than the path's.
const coalesceUsecsMax = 10

const coalesceWhy = "Each delay a receiver reports (one way, or a sender's round trips) includes the time the NIC held the frame before it interrupted: " +
	"rx-usecs adds up to that much, and adaptive moderation retunes it as the load changes, so every trial of a search runs with a different wait " +
	"and the delays (and at the edge the losses) depend on the trial before."

// coalesceOff is what the coalescing fix writes, and whether c differs
// from it. "Coalescing off" is adaptive rx and tx off, rx-usecs 0 and
// rx-frames 1 (the kernel's own definition: "to disable coalescing, set
// usecs = 0 and max_frames = 1", include/uapi/linux/ethtool.h; both zero
// is illegal, no interrupt would ever come). rx-frames is set to 1 only
// where the driver counts frames (it reads non-zero): a driver that does
// not refuses a non-zero value of a field it lacks (EOPNOTSUPP). The
// transmit side's static values are kept: a tx completion's wait delays
// no frame on the wire, and an interrupt per sent frame would cost a
// sender the CPU it needs for line rate. The _irq, _low and _high
// variants are kept too: they apply only with adaptive moderation or on
// a few old drivers. Every other field is written back as read.
func coalesceOff(c ethtool.Coalesce) (ethtool.Coalesce, bool) {
	w := c
	w.UseAdaptiveRX, w.UseAdaptiveTX = false, false
	w.RXUsecs = 0
	if w.RXMaxFrames > 1 {
		w.RXMaxFrames = 1
	}
	return w, coalesceWarns(c)
}

// coalesceWarns is true when adaptive rx or tx is on or rx-usecs is
// above coalesceUsecsMax.
func coalesceWarns(c ethtool.Coalesce) bool {
	return c.UseAdaptiveRX || c.UseAdaptiveTX || c.RXUsecs > coalesceUsecsMax
}

// coalesceCommand is the `ethtool -C` that writes w over c: the fields
// that differ.
func coalesceCommand(iface string, c, w ethtool.Coalesce) string {
	args := []string{"ethtool", "-C", iface}
	if c.UseAdaptiveRX != w.UseAdaptiveRX {
		args = append(args, "adaptive-rx", onOff(w.UseAdaptiveRX))
	}
	if c.UseAdaptiveTX != w.UseAdaptiveTX {
		args = append(args, "adaptive-tx", onOff(w.UseAdaptiveTX))
	}
	if c.RXUsecs != w.RXUsecs {
		args = append(args, "rx-usecs", fmt.Sprint(w.RXUsecs))
	}
	if c.RXMaxFrames != w.RXMaxFrames {
		args = append(args, "rx-frames", fmt.Sprint(w.RXMaxFrames))
	}
	return strings.Join(args, " ")
}

// checkCoalesce is WARN when adaptive rx or tx coalescing is on, or
// rx-usecs is above coalesceUsecsMax, for every role (a sender measures
// its round trips on what comes back).
func checkCoalesce(e *env) Check {
	c := Check{Title: "Interrupt coalescing (adaptive rx/tx, rx-usecs)", Why: coalesceWhy}
	return paramCheck(e, c, "-c ", "ETHTOOL_GCOALESCE", NIC.Coalesce, ethtool.Coalesce.String, func(co ethtool.Coalesce, c *Check) {
		if w, warn := coalesceOff(co); warn {
			var on []string
			if co.UseAdaptiveRX {
				on = append(on, "adaptive-rx on")
			}
			if co.UseAdaptiveTX {
				on = append(on, "adaptive-tx on")
			}
			if co.RXUsecs > coalesceUsecsMax {
				on = append(on, fmt.Sprintf("rx-usecs %d above %d µs", co.RXUsecs, coalesceUsecsMax))
			}
			lead(c, fmt.Sprintf("%s: %s (ethtool -c)", e.o.Iface, strings.Join(on, ", ")))
			warnFix(c, coalesceCommand(e.o.Iface, co, w), FixCoalescing)
			return
		}
		c.Evidence = append(c.Evidence, fmt.Sprintf("adaptive off and rx-usecs %d ≤ %d µs: the receive wait is within the timestamps' own spread", co.RXUsecs, coalesceUsecsMax))
	})
}

// fixCoalesce turns coalescing off (coalesceOff) where the check warns.
func fixCoalesce(e *env, j *journaler) error {
	return fixParam(e, j, topology.KindEthtoolCoalesce, NIC.Coalesce, NIC.SetCoalesce, coalesceOff)
}
