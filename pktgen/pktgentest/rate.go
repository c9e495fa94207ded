package pktgentest

import "testing"

// CheckRate checks a paced run's achieved rate. A pacer must never send
// faster than asked (+2 % for clock granularity), but on a shared
// 2-core machine another process can take the CPU from a paced thread
// for a while, which only makes it slower: up to 10 % below is accepted
// here. The 1 % accuracy is shown by the measurements in the package
// docs, not by a timed test.
func CheckRate(t testing.TB, what string, got, want float64) {
	t.Helper()
	if got > want*1.02 || got < want*0.90 {
		t.Errorf("%s: %.0f pps, want %.0f (at most +2 %%, at least -10 %%)", what, got, want)
	}
}
