//go:build linux

package pktgentest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/linerate/linerate/pktgen"
)

// CheckPerThreadRates paces two threads with their own rates, a total
// that does not divide (30001 pps: 15001 and 15000, pktgen.SplitRate),
// for a second with the backend newBackend makes for the setup, and
// checks every thread's rate and their sum (CheckRate's bounds).
func CheckPerThreadRates(t *testing.T, newBackend func(*Setup) pktgen.Backend) {
	t.Helper()
	const total = 30_001
	s := NewSetup(t, 2, []int{0, 1}, 40_000, func(c *pktgen.Config) {
		c.Rates, c.Duration = pktgen.SplitRate(total, 2), time.Second
	})
	from := time.Now()
	sum, err := newBackend(s).Run(context.Background(), s.Cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Verify(t, sum, from, time.Now())
	var pps float64
	for i, th := range sum.Threads {
		CheckRate(t, fmt.Sprintf("thread %d paced at %d pps: %d packets in %d µs", i, s.Cfg.Rates[i], th.Packets, th.USec), th.PPS, float64(s.Cfg.Rates[i]))
		pps += th.PPS
	}
	CheckRate(t, fmt.Sprintf("threads paced at %v pps together", s.Cfg.Rates), pps, total)
	t.Logf("threads paced at %v pps: %.1f pps together (want %d)", s.Cfg.Rates, pps, total)
}
