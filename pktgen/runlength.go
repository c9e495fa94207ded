package pktgen

import (
	"fmt"
	"strconv"
)

// ThreadRate is thread i's rate the config asks for, in packets per
// second (0: unpaced): Period's spacing as a rate.
func (c *Config) ThreadRate(i int) float64 {
	num, den := c.Period(i)
	if num == 0 {
		return 0
	}
	return float64(den) * 1e9 / float64(num)
}

// Slowest is the thread of a config whose count takes longest at its
// rate: the run length a count derives, the one rule behind a send's
// deadline (Config.Deadline) and the agent's bound on a send's length.
type Slowest struct {
	Thread int
	Count  uint64
	// Asked is the thread's rate as the config asks it (ThreadRate; 0:
	// unpaced), PPS the rate its time is taken at.
	Asked, PPS float64
	// Secs is Count at PPS, in seconds: a count of 1e10 at 1 pps is
	// longer than a time.Duration holds.
	Secs float64
}

// SlowestThread is the thread whose count takes longest at its rate,
// every thread's rate taken as at most ceiling packets per second and an
// unpaced one's as ceiling; with ceiling 0, as asked, an unpaced thread
// left out (its length cannot be derived). The threads are every entry of
// CPUs, Counts and Rates (at least one, with Count). ok is false when no
// thread has a count and a rate to take it at. Of threads as slow as each
// other, the first.
func (c *Config) SlowestThread(ceiling float64) (s Slowest, ok bool) {
	for i := range max(len(c.CPUs), len(c.Counts), len(c.Rates), 1) {
		n := c.CountOf(i)
		asked := c.ThreadRate(i)
		pps := asked
		if ceiling > 0 && (pps == 0 || pps > ceiling) {
			pps = ceiling
		}
		if n == 0 || pps == 0 {
			continue
		}
		if secs := float64(n) / pps; !ok || secs > s.Secs {
			s, ok = Slowest{Thread: i, Count: n, Asked: asked, PPS: pps, Secs: secs}, true
		}
	}
	return s, ok
}

// PPSText is a rate in packets per second as a message says it: whole
// from 100 pps up (1000000), else to three significant digits (0.5,
// 3.33).
func PPSText(pps float64) string {
	if pps >= 100 {
		return strconv.FormatFloat(pps, 'f', 0, 64)
	}
	return strconv.FormatFloat(pps, 'g', 3, 64)
}

// String is the thread's count and rate as a message says them: "count
// 1000 at 100 pps", with the rate it was taken at when that differs.
func (s Slowest) String() string {
	rate := PPSText(s.Asked) + " pps"
	switch {
	case s.Asked == 0:
		rate = fmt.Sprintf("unpaced, taken as %s pps", PPSText(s.PPS))
	case s.PPS != s.Asked:
		rate += fmt.Sprintf(", taken as %s pps", PPSText(s.PPS))
	}
	return fmt.Sprintf("count %d at %s", s.Count, rate)
}
