package lab

import (
	"strings"
	"testing"
	"time"
)

// --delay takes D or D,JITTER, prints back as it was given, and refuses,
// naming the bound, a negative delay or jitter, a delay over 10 s, a
// jitter over the delay, a part of a microsecond and what is no duration.
func TestParseDelay(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Delay
	}{
		{"20ms", Delay{D: 20 * time.Millisecond}},
		{"20ms,1ms", Delay{D: 20 * time.Millisecond, Jitter: time.Millisecond}},
		{" 1.5ms , 250us ", Delay{D: 1500 * time.Microsecond, Jitter: 250 * time.Microsecond}},
		{"10s,10s", Delay{D: MaxDelay, Jitter: MaxDelay}},
		{"0", Delay{}},
	} {
		got, err := ParseDelay(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseDelay(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			continue
		}
		if back, err := ParseDelay(got.String()); err != nil || back != got {
			t.Errorf("%q printed as %q reads back %+v, %v", tc.in, got, back, err)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"-1ms", "want a delay and jitter of 0 or more"},
		{"20ms,-1ms", "want a delay and jitter of 0 or more"},
		{"10001ms", "want at most 10s"},
		{"1ms,2ms", "the jitter 2ms is larger than the delay 1ms: want jitter ≤ delay"},
		{"1500ns", "netem counts whole microseconds"},
		{"soon", "want D or D,JITTER"},
		{"", "want D or D,JITTER"},
		{"20ms,", `jitter "": want a duration`},
	} {
		if _, err := ParseDelay(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseDelay(%q): %v, want %q", tc.in, err, tc.want)
		}
	}
	if !(Delay{}).IsZero() || (Delay{D: 1}).IsZero() {
		t.Error("IsZero")
	}
	if got := (Delay{D: 20 * time.Millisecond, Jitter: time.Millisecond}).String(); got != "20ms,1ms" {
		t.Errorf("String %q, want 20ms,1ms", got)
	}
}
