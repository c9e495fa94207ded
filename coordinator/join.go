package coordinator

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/linerate/linerate/internal/cluster/gossip"
	"github.com/linerate/linerate/internal/ctxsleep"
)

// DefaultJoinTimeout is how long JoinCluster keeps trying its seeds when
// ClusterConfig.JoinTimeout is zero: long enough for agents started with
// the coordinator, or a little after it, to come up
// (`linerate run|members|campaign --join-timeout`).
const DefaultJoinTimeout = 30 * time.Second

// joinRetryMax is the longest wait between a coordinator's join
// attempts: shorter than an agent's (gossip.DefaultJoinRetryMax), because
// a coordinator is one member waiting on its agents, not one of a fleet
// that would overload its seeds, and agents that come up should be found
// within seconds.
const joinRetryMax = 5 * time.Second

// joiner is the one call of a serf member a join makes
// (gossip.Member's Join).
type joiner interface {
	Join(seeds []string, ignoreOld bool) (int, error)
}

// joinRetry is how a coordinator's join is retried: with the agents'
// backoff (gossip.JoinBackoff) until a seed answers or timeout has
// passed, so that a coordinator started before, with or after its agents
// finds them. Tests give it a clock of their own.
type joinRetry struct {
	timeout     time.Duration
	first, most time.Duration
	now         func() time.Time
	sleep       func(context.Context, time.Duration) error
	rand        func() float64
	log         hclog.Logger
}

// newJoinRetry is cfg's retry on the real clock.
func newJoinRetry(cfg ClusterConfig) joinRetry {
	timeout := cfg.JoinTimeout
	if timeout <= 0 {
		timeout = DefaultJoinTimeout
	}
	return joinRetry{
		timeout: timeout, first: gossip.DefaultJoinRetry, most: joinRetryMax,
		now: time.Now, sleep: ctxsleep.Sleep, rand: rand.Float64, log: cfg.Logger,
	}
}

// join joins seeds (serf contacts every one; one answer is enough, the
// rest of the cluster comes by gossip). When none answers it waits the
// backoff, never past the deadline, and tries again, a last time at the
// deadline. Giving up, its error names the seeds, how long it tried, how
// many times, and the last attempt's error.
func (r joinRetry) join(ctx context.Context, s joiner, seeds []string) (int, error) {
	start := r.now()
	deadline := start.Add(r.timeout)
	var last error
	attempt := 1
	for ; ; attempt++ {
		n, err := s.Join(seeds, true)
		if n > 0 {
			if attempt > 1 {
				r.log.Info("joined the cluster", "seeds", strings.Join(seeds, ","), "attempt", attempt, "after", r.now().Sub(start).Round(time.Millisecond))
			}
			return n, nil
		}
		if err == nil {
			err = errors.New("no member answered")
		}
		last = err
		left := deadline.Sub(r.now())
		if left <= 0 {
			break
		}
		wait := min(gossip.JoinBackoff(attempt, r.first, r.most, r.rand()), left)
		if attempt == 1 {
			// Expected when the coordinator starts before its agents:
			// said once, not a warning; giving up is the error.
			r.log.Info("waiting for the cluster: no seed answered yet, retrying with backoff",
				"seeds", strings.Join(seeds, ","), "for", r.timeout, "error", err)
		} else {
			r.log.Debug("join the cluster: no seed answered", "attempt", attempt, "retry in", wait, "error", err)
		}
		if err := r.sleep(ctx, wait); err != nil {
			return 0, fmt.Errorf("join the cluster at %s: stopped after %s (%d attempts; last error: %v): %w",
				strings.Join(seeds, ", "), r.now().Sub(start).Round(time.Millisecond), attempt, last, err)
		}
	}
	return 0, fmt.Errorf("join the cluster at %s: no seed answered in %s (%d attempts; last error: %w); is an agent gossiping there, with the same gossip key? (give it longer with --join-timeout)",
		strings.Join(seeds, ", "), r.now().Sub(start).Round(time.Millisecond), attempt, last)
}
