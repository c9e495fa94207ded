package coordinator

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// seedsAt is a serf member whose seeds answer from a time on (never when
// up is zero), on a clock the test moves.
type seedsAt struct {
	clock *fakeClock
	up    time.Time
	calls []time.Duration // when each join was tried, since the start
}

func (s *seedsAt) Join([]string, bool) (int, error) {
	s.calls = append(s.calls, s.clock.t.Sub(s.clock.start))
	if !s.up.IsZero() && !s.clock.t.Before(s.up) {
		return 1, nil
	}
	return 0, errors.New("dial tcp 198.18.0.1:7946: connect: connection refused")
}

// fakeClock moves only when the join sleeps.
type fakeClock struct{ start, t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func (c *fakeClock) sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.t = c.t.Add(d)
	return nil
}

func testRetry(c *fakeClock, timeout time.Duration) joinRetry {
	return joinRetry{timeout: timeout, first: time.Second, most: 30 * time.Second,
		now: c.now, sleep: c.sleep, rand: func() float64 { return 1 }, log: hclog.NewNullLogger()}
}

// No seed ever answers: the join gives up at its deadline, after a last
// attempt there, and its error names the seeds, how long it tried, the
// attempts and the last error.
func TestJoinRetryGivesUpAtDeadline(t *testing.T) {
	c := &fakeClock{start: time.Unix(1e9, 0)}
	c.t = c.start
	s := &seedsAt{clock: c}
	_, err := testRetry(c, 10*time.Second).join(context.Background(), s, []string{"198.18.0.1:7946", "198.18.0.2:7946"})
	if err == nil {
		t.Fatal("joined without a seed")
	}
	// 1 s, 2 s, 4 s, then the 3 s left: attempts at 0, 1, 3, 7 and 10 s.
	want := []time.Duration{0, time.Second, 3 * time.Second, 7 * time.Second, 10 * time.Second}
	if len(s.calls) != len(want) {
		t.Fatalf("attempts at %v, want %v", s.calls, want)
	}
	for i := range want {
		if s.calls[i] != want[i] {
			t.Fatalf("attempts at %v, want %v", s.calls, want)
		}
	}
	for _, part := range []string{"198.18.0.1:7946, 198.18.0.2:7946", "in 10s", "5 attempts", "connection refused", "--join-timeout"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q does not say %q", err, part)
		}
	}
}

// A seed that comes up after the coordinator started: the join that
// follows succeeds, before the deadline.
func TestJoinRetrySeedAppearsLate(t *testing.T) {
	c := &fakeClock{start: time.Unix(1e9, 0)}
	c.t = c.start
	s := &seedsAt{clock: c, up: c.start.Add(2500 * time.Millisecond)}
	n, err := testRetry(c, 30*time.Second).join(context.Background(), s, []string{"198.18.0.1:7946"})
	if err != nil || n != 1 {
		t.Fatalf("join = %d, %v; want the late seed joined", n, err)
	}
	if got := s.calls[len(s.calls)-1]; got != 3*time.Second {
		t.Errorf("joined at %s, want 3s (the attempt after the seed came up at 2.5s); attempts %v", got, s.calls)
	}
}

// A join stopped (SIGINT) says so, with what it tried.
func TestJoinRetryStopped(t *testing.T) {
	c := &fakeClock{start: time.Unix(1e9, 0)}
	c.t = c.start
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := testRetry(c, 30*time.Second).join(ctx, &seedsAt{clock: c}, []string{"198.18.0.1:7946"})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "198.18.0.1:7946") {
		t.Errorf("got %v, want context.Canceled naming the seed", err)
	}
}

// The real clock and a real serf member: a coordinator whose seed is not
// up gives up at its short deadline.
func TestJoinClusterGivesUp(t *testing.T) {
	t0 := time.Now()
	_, err := JoinCluster(context.Background(), ClusterConfig{Bind: "127.0.0.1:0", Join: []string{"127.0.0.1:1"},
		InsecureGossip: true, JoinTimeout: 1500 * time.Millisecond})
	took := time.Since(t0)
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") || !strings.Contains(err.Error(), "attempts") {
		t.Fatalf("got %v, want the seed and the attempts named", err)
	}
	if took < 1500*time.Millisecond || took > 10*time.Second {
		t.Errorf("gave up after %s, want about 1.5s", took)
	}
}
