package latency

import (
	"fmt"

	"github.com/linerate/linerate/internal/enum"
)

// Clock says how a delay's send time and arrival time relate: what the
// figure can be trusted to.
type Clock string

// The clocks a delay is measured on.
const (
	// SameHost: sent and received on one host's realtime clock (one boot
	// id): exact to the header's microsecond.
	SameHost Clock = "same-host"
	// Synchronised: each host's kernel says its clock is synchronised
	// (adjtimex), and the error is the sum of their estimated errors.
	Synchronised Clock = "synchronised"
	// Estimated: corrected by the offset linerate measured between the
	// hosts, and the error is that measurement's bound.
	Estimated Clock = "estimated"
	// Unsynchronised: two clocks nobody has related; only the spread of
	// the delays means something (jitter, PDV), never their level.
	Unsynchronised Clock = "unsynchronised"
)

// Clocks lists the clocks in the order they are said.
var Clocks = []Clock{SameHost, Synchronised, Estimated, Unsynchronised}

// ParseClock returns the clock named s; name is what an error calls it
// (a flag).
func ParseClock(name, s string) (Clock, error) {
	for _, c := range Clocks {
		if string(c) == s {
			return c, nil
		}
	}
	return "", fmt.Errorf("%s %q: want %s", name, s, enum.Or(Clocks))
}
