package doctor

import (
	"fmt"
	"strings"

	"github.com/linerate/linerate/topology"
)

// runningTimeDaemons are the time daemons in /proc, "name (pid N)", or
// why /proc could not be listed.
func runningTimeDaemons(e *env) ([]string, error) {
	procs, err := topology.ProcessesNamed(e.h.Root, topology.TimeDaemons...)
	var out []string
	for _, p := range procs {
		out = append(out, fmt.Sprintf("%s (pid %d)", p.Comm, p.PID))
	}
	return out, err
}

const clockWhy = "One-way latency between two hosts subtracts one host's clock from the other's: unsynchronised, the run falls back to the offset it " +
	"measures itself, and each latency carries that measurement's bound instead of the time daemon's."

// checkClock: the kernel clock's synchronisation, for one-way latency.
func checkClock(e *env) Check {
	c := Check{Title: "clock synchronisation", Why: clockWhy}
	daemons, procErr := runningTimeDaemons(e)
	said := "/proc/*/comm: no time daemon (chronyd, ntpd, ptp4l, phc2sys, systemd-timesyncd) running"
	switch {
	case procErr != nil:
		said = fmt.Sprintf("/proc/*/comm: cannot list /proc (%v): the time daemons running are unknown", procErr)
	case len(daemons) > 0:
		said = "/proc/*/comm: time daemons running: " + strings.Join(daemons, ", ")
	}
	if e.o.OneClock {
		c.Status = Pass
		c.Evidence = []string{"the run times every delay on one clock (round trips, hosts of one kernel, or latency off): its synchronisation does not enter the numbers", said}
		return c
	}
	if e.h.Clock == nil {
		c.Status = Warn
		c.Evidence = []string{"adjtimex: not read on this host root (a snapshot or fixture)", said}
		return c
	}
	clk, err := e.h.Clock()
	if err != nil {
		c.Status = Warn
		c.Evidence = []string{fmt.Sprintf("adjtimex: %v", err), said}
		return c
	}
	c.Evidence = []string{
		fmt.Sprintf("adjtimex: synchronised %v, state %d, status 0x%04x, esterror %d µs, maxerror %d µs", clk.Synchronised, clk.State, clk.Status, clk.EstErrorUs, clk.MaxErrorUs),
		said,
	}
	if clk.Synchronised {
		c.Status = Pass
		return c
	}
	c.Status = Warn
	// The verdict is adjtimex's; which daemons run only words the fix.
	switch {
	case procErr != nil:
		c.Fix = "check the time daemon if one runs (chronyc tracking, timedatectl timesync-status, pmc 'GET TIME_STATUS_NP'), else systemctl enable --now chrony (or systemd-timesyncd)"
	case len(daemons) > 0:
		c.Fix = fmt.Sprintf("wait for %s to synchronise (chronyc tracking, timedatectl timesync-status, pmc 'GET TIME_STATUS_NP'), or check its servers", strings.Join(daemons, ", "))
	default:
		c.Fix = "systemctl enable --now chrony (or systemd-timesyncd); for sub-µs one-way latency, ptp4l and phc2sys on a NIC with a PTP hardware clock"
	}
	return c
}
