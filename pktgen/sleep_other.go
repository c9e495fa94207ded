//go:build !linux

package pktgen

import "time"

// sleepFor sleeps about d.
func sleepFor(d time.Duration) { time.Sleep(d) }
