package ctxsleep

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestSleep(t *testing.T) {
	start := time.Now()
	if err := Sleep(context.Background(), 20*time.Millisecond); err != nil {
		t.Fatalf("a full sleep: %v", err)
	}
	if d := time.Since(start); d < 20*time.Millisecond {
		t.Errorf("slept %s, want at least 20ms", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start = time.Now()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled sleep: %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > time.Minute {
		t.Errorf("a cancelled sleep took %s", d)
	}
}
