package lab

import (
	"fmt"
	"strings"
	"time"
)

// MaxDelay bounds a lab's added delay: netem holds every frame of the
// delay in its queue, and no path a lab models is slower than 10 s.
const MaxDelay = 10 * time.Second

// Delay is what the lab adds on the path toward the receivers: netem on
// each sender's data interface delays every frame by D, varied by up to
// ±Jitter (uniformly, netem's default). The zero Delay adds nothing.
type Delay struct {
	D      time.Duration
	Jitter time.Duration
}

// IsZero tells whether d adds nothing.
func (d Delay) IsZero() bool { return d.D == 0 && d.Jitter == 0 }

// String is d as --delay takes it: "20ms" or "20ms,1ms".
func (d Delay) String() string {
	if d.Jitter == 0 {
		return d.D.String()
	}
	return d.D.String() + "," + d.Jitter.String()
}

// Check refuses a delay netem cannot hold or that says nothing: D and
// Jitter at least 0, D at most MaxDelay, Jitter at most D (a frame is
// never sent before it was built).
func (d Delay) Check() error {
	switch {
	case d.D < 0 || d.Jitter < 0:
		return fmt.Errorf("delay %s: want a delay and jitter of 0 or more", d)
	case d.D > MaxDelay:
		return fmt.Errorf("delay %s: want at most %s", d, MaxDelay)
	case d.Jitter > d.D:
		return fmt.Errorf("delay %s: the jitter %s is larger than the delay %s: want jitter ≤ delay", d, d.Jitter, d.D)
	case d.D%time.Microsecond != 0 || d.Jitter%time.Microsecond != 0:
		return fmt.Errorf("delay %s: netem counts whole microseconds", d)
	}
	return nil
}

// ParseDelay reads --delay: D or D,JITTER, each a Go duration (20ms,
// 1.5ms, 250us), checked as Delay.Check does.
func ParseDelay(s string) (Delay, error) {
	ds, js, hasJitter := strings.Cut(strings.TrimSpace(s), ",")
	var d Delay
	var err error
	if d.D, err = time.ParseDuration(strings.TrimSpace(ds)); err != nil {
		return Delay{}, fmt.Errorf("want D or D,JITTER, each a duration such as 20ms or 500us")
	}
	if hasJitter {
		if d.Jitter, err = time.ParseDuration(strings.TrimSpace(js)); err != nil {
			return Delay{}, fmt.Errorf("jitter %q: want a duration such as 1ms or 500us", js)
		}
	}
	return d, d.Check()
}
