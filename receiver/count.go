package receiver

import (
	"context"
	"fmt"
	"time"
)

// Until says when Count stops, besides its context ending: after
// Duration, or once no new test packet arrived for Idle since the first
// one did; at most one of them (both zero: only the context stops it).
type Until struct {
	Duration, Idle time.Duration
}

// Progress is what Count reports while it counts, about once a second.
type Progress struct {
	TestPackets uint64
	Elapsed     time.Duration
}

// check refuses a negative duration, or both, naming them as n says.
func (u Until) check(n Names) error {
	dur, _ := orField(n.Duration, "Duration")
	idle, _ := orField(n.UntilIdle, "Idle")
	switch {
	case u.Duration < 0:
		return fmt.Errorf("%w: %s %v: want a positive duration such as 10s", ErrOptions, dur, u.Duration)
	case u.Idle < 0:
		return fmt.Errorf("%w: %s %v: want a positive duration such as 10s", ErrOptions, idle, u.Idle)
	case u.Duration > 0 && u.Idle > 0:
		return fmt.Errorf("%w: give at most one of %s and %s", ErrOptions, dur, idle)
	}
	return nil
}

// Count counts on o.Iface (Start) until ctx ends or u says to stop, and
// returns the report; the receiver is detached on every path. It logs
// to o.Logger when it counts and why it stops, and calls progress, when
// set, about once a second with the test packets so far. Invalid options
// are ErrOptions, named as o.Names says.
func Count(ctx context.Context, o Options, u Until, progress func(Progress)) (*Report, error) {
	if err := u.check(o.Names); err != nil {
		return nil, err
	}
	r, err := Start(ctx, o)
	if err != nil {
		return nil, err
	}
	defer r.Close() // detaches on every path, panics included
	log := r.o.Logger
	method, why := r.Method()
	log.Info("armed: counting", "iface", o.Iface, "method", method, "why", why)

	var deadline <-chan time.Time
	if u.Duration > 0 {
		t := time.NewTimer(u.Duration)
		defer t.Stop()
		deadline = t.C
	}
	tick := 250 * time.Millisecond
	if u.Idle > 0 {
		tick = min(tick, u.Idle/4)
	}
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	var seen uint64
	lastChange, lastReport, start := time.Now(), time.Now(), time.Now()
wait:
	for {
		select {
		case <-ctx.Done():
			log.Info("interrupted: stopping")
			break wait
		case <-deadline:
			break wait
		case now := <-ticker.C:
			n := r.Snapshot().TestPackets()
			if n != seen {
				seen, lastChange = n, now
			}
			if u.Idle > 0 && seen > 0 && now.Sub(lastChange) >= u.Idle {
				log.Info("idle: stopping", "idle", u.Idle)
				break wait
			}
			if progress != nil && now.Sub(lastReport) >= time.Second {
				lastReport = now
				progress(Progress{TestPackets: seen, Elapsed: now.Sub(start)})
			}
		}
	}
	rep, err := r.Stop()
	if err != nil {
		return nil, fmt.Errorf("stop receiver on %s: %w", o.Iface, err)
	}
	return rep, nil
}
