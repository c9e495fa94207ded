package pktgen

// RealtimeOf moves a CLOCK_MONOTONIC reading of monoUS µs (pktgen's
// "started:", ktime_get) onto CLOCK_REALTIME as Unix ns, with offsetNs
// the realtime clock's lead over the monotonic one read at one moment
// (MonoOffset). 0 (unknown) for a zero reading, or one that would fall
// before the epoch.
func RealtimeOf(monoUS uint64, offsetNs int64) uint64 {
	if monoUS == 0 || monoUS > 1<<62/1000 {
		return 0
	}
	ns := int64(monoUS)*1000 + offsetNs
	if ns <= 0 {
		return 0
	}
	return uint64(ns)
}
