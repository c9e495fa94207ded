package pktgen

import (
	"fmt"
	"math"
	"time"
)

// Deadline bounds: what a watchdog (the agent's) allows a send beyond what
// its config asks.
const (
	// DeadlineMargin is the fixed part of a send's margin: arming
	// (sockets, frames, an XDP program load, pktgen's device setup) and
	// collecting the result (pktgen's per-device Result retries).
	DeadlineMargin = 10 * time.Second
	// FloorPPS is the slowest a thread is expected to send, per thread,
	// whatever the rate asked: an unpaced run by count, or a paced one on
	// a host that cannot keep up, is given the time its count takes at
	// this rate. It is far below any real sender (a 50 Mb/s shaped lab
	// path still carries 4 kpps of 1500-byte frames).
	FloorPPS = 1000
	// MaxDeadline is the longest a send may run: its deadline is never
	// later, however large its count.
	MaxDeadline = 7 * 24 * time.Hour
)

// Deadline is how long a send of a config may take from its start
// instant, and why.
type Deadline struct {
	// Expected is the time the config asks for: its duration, or its
	// slowest thread's count at that thread's rate (taken as at most
	// FloorPPS; unpaced: FloorPPS), the shorter of both when both are
	// set.
	Expected time.Duration
	// Limit is Expected + Expected/4 + margin, at most MaxDeadline: past
	// it the send is stopped.
	Limit time.Duration
	// Basis says what Expected came from, for the message of a stopped
	// send.
	Basis string
}

// Deadline is the config's deadline with margin as its fixed part
// (DeadlineMargin when 0): Limit = Expected + Expected/4 + margin.
func (c *Config) Deadline(margin time.Duration) Deadline {
	if margin <= 0 {
		margin = DeadlineMargin
	}
	var d Deadline
	byCount, basis, counted := c.countTime()
	switch {
	case counted && (c.Duration <= 0 || byCount < c.Duration):
		d.Expected, d.Basis = byCount, basis
	case c.Duration > 0:
		d.Expected, d.Basis = c.Duration, fmt.Sprintf("duration %s", c.Duration)
	}
	limit := float64(d.Expected) * 1.25
	limit += float64(margin)
	d.Limit = time.Duration(min(limit, float64(MaxDeadline)))
	d.Basis += fmt.Sprintf(", + 1/4 + %s margin", margin)
	if limit > float64(MaxDeadline) {
		d.Basis += fmt.Sprintf(", at most %s", MaxDeadline)
	}
	return d
}

// countTime is how long the slowest thread's count takes at its rate
// (at most FloorPPS, SlowestThread), saturated at MaxDeadline; counted is
// false for a run without counts.
func (c *Config) countTime() (d time.Duration, basis string, counted bool) {
	s, ok := c.SlowestThread(FloorPPS)
	if !ok {
		return 0, "", false
	}
	ns := math.Min(s.Secs*1e9, float64(MaxDeadline))
	return time.Duration(ns), s.String(), true
}
