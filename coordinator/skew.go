package coordinator

import (
	"math"
	"slices"
	"time"
)

// minStartLead is the least time between scheduling a start and the
// instant itself.
const minStartLead = 200 * time.Millisecond

// startLead is how far ahead to set the common start instant when the
// slowest sender answers in worstRTT: ten round trips, at least
// minStartLead, so that every Start call arrives before the instant.
func startLead(worstRTT time.Duration) time.Duration {
	return max(minStartLead, 10*worstRTT)
}

// skewOf measures how the senders started against the instant at: the
// spread (last start minus first) and the 50th and 99th percentiles of
// each start's lateness after at, all in µs (0 for no starts).
func skewOf(at time.Time, started map[string]time.Time) (spreadUS, p50US, p99US float64) {
	var late []float64
	var first, last time.Time
	for _, t := range started {
		if first.IsZero() || t.Before(first) {
			first = t
		}
		if last.IsZero() || t.After(last) {
			last = t
		}
		late = append(late, float64(t.Sub(at).Nanoseconds())/1e3)
	}
	return float64(last.Sub(first).Nanoseconds()) / 1e3, percentile(late, 50), percentile(late, 99)
}

// percentile is the nearest-rank p-th percentile of v (0 for none).
func percentile(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[min(max(rank, 1), len(s))-1]
}
