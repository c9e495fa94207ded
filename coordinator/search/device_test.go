package search

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"time"
)

// lineRate64 is 64-byte frames at 10 Gb/s: 10e9 / ((64+20) * 8).
const lineRate64 = 10e9 / (84 * 8)

// curve is a device's true loss ratio at an offered rate for a duration.
type curve func(rate float64, d time.Duration) float64

// cliff forwards up to t pps and drops the excess.
func cliff(t float64) curve {
	return func(r float64, _ time.Duration) float64 {
		if r <= t*(1+1e-12) { // the forwarding estimate lands on t give or take rounding
			return 0
		}
		return (r - t) / r
	}
}

// knee loses nothing up to t1, 0.2 % between t1 and t2, and above t2 that
// plus the excess over t2.
func knee(t1, t2 float64) curve {
	return func(r float64, _ time.Duration) float64 {
		switch {
		case r <= t1:
			return 0
		case r <= t2:
			return 0.002
		}
		return 0.002 + (r-t2)/r
	}
}

// buffered forwards t pps and absorbs a burst of b packets: a short trial
// sees a higher throughput (t + b/d) than a long one.
func buffered(t, b float64) curve {
	return func(r float64, d time.Duration) float64 {
		return cliff(t+b/d.Seconds())(r, d)
	}
}

// noisy adds up to amp of random loss wherever the curve loses.
func noisy(c curve, amp float64, rng *rand.Rand) curve {
	return func(r float64, d time.Duration) float64 {
		l := c(r, d)
		if l > 0 {
			l = min(1, l+amp*rng.Float64())
		}
		return l
	}
}

// call is one trial as the device saw it.
type call struct {
	rate  float64
	d     time.Duration
	phase string
}

// device is a simulated device under test behind a simulated generator.
type device struct {
	loss curve
	// gen caps the generator: above it a trial is generator-limited and
	// reaches gen·shortfall (shortfall 0 means 1).
	gen, shortfall float64
	// failAt makes the trials with these 1-based numbers fail to run.
	failAt map[int]bool
	// stallAt makes the generator reach only half the rate in the
	// trials with these numbers (a stall on a busy host).
	stallAt map[int]bool
	// abortAt makes the trial with this number return an error.
	abortAt int
	calls   []call
}

var errAgentDied = errors.New("agent sender-1 died")

func (dv *device) trial(_ context.Context, rate float64, d time.Duration, phase string) (Outcome, error) {
	dv.calls = append(dv.calls, call{rate, d, phase})
	n := len(dv.calls)
	if n == dv.abortAt {
		return Outcome{}, errors.New("campaign runner: lost the coordinator")
	}
	if dv.failAt[n] {
		return Outcome{OfferedPPS: rate, Err: errAgentDied}, nil
	}
	if dv.stallAt[n] {
		return Outcome{OfferedPPS: rate, AchievedPPS: rate / 2, GeneratorLimited: true}, nil
	}
	if dv.gen > 0 && rate > dv.gen*(1+1e-9) {
		f := dv.shortfall
		if f == 0 {
			f = 1
		}
		return Outcome{OfferedPPS: rate, AchievedPPS: dv.gen * f, GeneratorLimited: true}, nil
	}
	loss := dv.loss(rate, d)
	sent := uint64(rate * d.Seconds())
	lost := uint64(math.Round(loss * float64(sent)))
	return Outcome{
		OfferedPPS: rate, AchievedPPS: rate,
		Sent: sent, Received: sent - lost, Lost: lost, LossRatio: loss,
	}, nil
}
