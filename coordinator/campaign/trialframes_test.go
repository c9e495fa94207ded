package campaign

import (
	"testing"
	"time"
)

// A trial's frames are its time at its rate, in whole pktgen bursts, at
// least one burst for each thread.
func TestTrialFrames(t *testing.T) {
	for _, tc := range []struct {
		rate           float64
		d              time.Duration
		burst, threads int
		want           uint64
	}{
		{6250, 2 * time.Second, 0, 0, 12500},
		{4166.7, 2 * time.Second, 1, 0, 8334},      // 8333.4, rounded up
		{4166.7, 2 * time.Second, 4, 0, 8336},      // whole bursts of 4
		{1, 100 * time.Millisecond, 0, 4, 4},       // one for each thread
		{1, 100 * time.Millisecond, 8, 2, 16},      // one burst for each
		{14_880_952, time.Minute, 1, 0, 892857120}, // 10 Gb/s of 64 B for a minute
	} {
		if got := trialFrames(tc.rate, tc.d, tc.burst, tc.threads); got != tc.want {
			t.Errorf("%v pps for %s, burst %d, %d threads: %d frames, want %d", tc.rate, tc.d, tc.burst, tc.threads, got, tc.want)
		}
	}
}
