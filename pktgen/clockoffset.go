package pktgen

// offsetTries is how many readings bestOffset takes at most, and
// offsetGoodNs the bracket it stops at: three vDSO reads take well
// under a microsecond when nothing preempts them.
const (
	offsetTries  = 16
	offsetGoodNs = 2000
)

// bestOffset is the realtime clock's lead over the monotonic one from
// read, which reads realtime, monotonic, realtime: of up to offsetTries
// readings, the one whose two realtime reads are closest, its monotonic
// read set at their midpoint. One reading alone is off by half its
// bracket, and a thread preempted between its reads (two busy CPUs) saw
// brackets of milliseconds: every stamp a sender made with that offset
// was late by as much, and the receiver counted same-host delays
// negative.
func bestOffset(read func() (r0, m, r1 int64, err error)) (int64, error) {
	var best, bracket int64 = 0, -1
	for range offsetTries {
		r0, m, r1, err := read()
		if err != nil {
			return 0, err
		}
		if b := r1 - r0; b >= 0 && (bracket < 0 || b < bracket) {
			best, bracket = r0+b/2-m, b
		}
		if bracket >= 0 && bracket <= offsetGoodNs {
			break
		}
	}
	return best, nil
}
