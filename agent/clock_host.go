package agent

import (
	"os"
	"strings"

	"github.com/linerate/linerate/doctor/live"
)

// readHostClock reads the kernel's clock discipline (live.ReadClock:
// adjtimex, read only, the one read of it) and the boot id.
func readHostClock() clockInfo {
	var c clockInfo
	if b, err := os.ReadFile("/proc/sys/kernel/random/boot_id"); err == nil {
		c.bootID = strings.TrimSpace(string(b))
	}
	k, err := live.ReadClock()
	if err != nil {
		c.err = err
		return c
	}
	c.state, c.status = k.State, k.Status
	c.estErrorUS, c.maxErrorUS = k.EstErrorUs, k.MaxErrorUs
	c.synchronised = k.Synchronised
	return c
}
