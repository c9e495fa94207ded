package coordinator

import (
	"testing"
	"time"
)

// The senders of a run are stopped, and their Result waits end, at the
// agent's deadline for the run (pktgen.Config.Deadline) plus
// senderOverrun: for runs by count as for runs by duration.
func TestSendBound(t *testing.T) {
	for _, tc := range []struct {
		spec Spec
		want time.Duration
	}{
		{Spec{Duration: 5 * time.Second}, 35 * time.Second},
		// 10 s at the rate, + 1/4 + 10 s margin, + 30 s.
		{Spec{Count: 1000, Rate: 100}, 52500 * time.Millisecond},
		// Unpaced: reckoned at 1000 pps.
		{Spec{Count: 5000}, 46250 * time.Millisecond},
	} {
		st := &runState{spec: tc.spec}
		if got := st.sendBound(); got != tc.want {
			t.Errorf("%+v: bound %s, want %s", tc.spec, got, tc.want)
		}
	}
}
