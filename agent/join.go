package agent

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/linerate/linerate/internal/cluster/gossip"
)

// Join retry bounds used when Config leaves them zero: gossip's.
const (
	DefaultJoinRetry    = gossip.DefaultJoinRetry
	DefaultJoinRetryMax = gossip.DefaultJoinRetryMax
)

// join joins the seeds in a.cfg.Join. It tries once at once; when no seed
// answers it logs a warning and keeps trying in the background with
// exponential backoff and jitter until one does or the agent stops — an
// agent never exits because its seeds are down or overloaded (a fleet
// started together overloads its seeds; a seed may come up later). It
// reports whether the first attempt joined.
func (a *Agent) join(ctx context.Context, s *gossip.Member) bool {
	if len(a.cfg.Join) == 0 {
		return true
	}
	if a.tryJoin(s, 0) {
		return true
	}
	go func() {
		for attempt := 1; ; attempt++ {
			t := time.NewTimer(gossip.JoinBackoff(attempt, a.cfg.JoinRetry, a.cfg.JoinRetryMax, rand.Float64()))
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-s.ShutdownCh():
				t.Stop()
				return
			case <-t.C:
			}
			if a.tryJoin(s, attempt) {
				return
			}
		}
	}()
	return false
}

// tryJoin makes one join attempt: the seeds in a random order, each in
// turn until one answers (a push-pull of the whole member list with it;
// one is enough, the rest come by gossip). Every agent of a fleet can be
// given the same seeds: the random order spreads their joins over them,
// and a seed down or overloaded costs only a try of the next. Each seed
// that did not answer is logged at warn.
func (a *Agent) tryJoin(s *gossip.Member, attempt int) bool {
	seeds := slices.Clone(a.cfg.Join)
	rand.Shuffle(len(seeds), func(i, j int) { seeds[i], seeds[j] = seeds[j], seeds[i] })
	for _, seed := range seeds {
		if _, err := s.Join([]string{seed}, true); err != nil {
			a.log.Warn("join the cluster: seed did not answer", "seed", seed, "attempt", attempt+1, "error", err)
			continue
		}
		a.log.Info("joined the cluster", "seed", seed, "members", s.NumNodes(), "attempt", attempt+1)
		return true
	}
	a.log.Warn("join the cluster: no seed answered: retrying with backoff", "seeds", strings.Join(a.cfg.Join, ","), "attempt", attempt+1)
	return false
}
