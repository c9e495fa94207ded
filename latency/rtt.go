package latency

// A round trip's latency stream (linerate run --latency rtt): its rate to
// each receiver, packets a second.
const (
	// DefaultRTTRate is the latency stream's rate when none is given: a
	// thousand round trips a second, a millisecond apart.
	DefaultRTTRate = 1000
	// MaxRTTRate bounds it: a probe beside the load, not a load.
	MaxRTTRate = 10_000
)
