package gossip

import "time"

// Join retry bounds of an agent whose configuration leaves them zero:
// the first retry after a second, doubling up to half a minute (Consul's
// retry_join waits 30 s between attempts). A coordinator's join caps its
// waits lower (coordinator/join.go); JoinBackoff is what both share.
const (
	DefaultJoinRetry    = time.Second
	DefaultJoinRetryMax = 30 * time.Second
)

// JoinBackoff is the wait before join retry attempt (1, 2, …):
// first·2^(attempt-1) capped at most, then scaled by a jitter of 0.5–1.0
// (r in [0,1)) so that members that failed together do not retry
// together. It is the one backoff of every join: an agent's toward its
// seeds, a coordinator's toward its --join addresses.
func JoinBackoff(attempt int, first, most time.Duration, r float64) time.Duration {
	d := first
	for i := 1; i < attempt && d < most; i++ {
		d *= 2
	}
	d = min(d, most)
	return time.Duration(float64(d) * (0.5 + r/2))
}
