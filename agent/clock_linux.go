//go:build linux

package agent

import (
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// readHostClock asks adjtimex with modes 0 (nothing is changed) and
// reads the boot id.
func readHostClock() clockInfo {
	var c clockInfo
	if b, err := os.ReadFile("/proc/sys/kernel/random/boot_id"); err == nil {
		c.bootID = strings.TrimSpace(string(b))
	}
	tx := unix.Timex{Modes: 0}
	state, err := unix.Adjtimex(&tx)
	if err != nil {
		c.err = fmt.Errorf("adjtimex (read only): %w", err)
		return c
	}
	c.state, c.status = int32(state), int32(tx.Status)
	c.estErrorUS, c.maxErrorUS = int64(tx.Esterror), int64(tx.Maxerror)
	c.synchronised = synced(c.state, c.status)
	return c
}
