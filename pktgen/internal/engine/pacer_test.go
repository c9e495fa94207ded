package engine

import (
	"testing"
	"time"
)

func TestPacerRate(t *testing.T) {
	// 3 packets every 1000 ns: period 333.33 ns, no drift.
	p := NewPacer(1000, 3, 8)
	var now int64
	sent := uint64(0)
	for now < 1e9 {
		n, wait := p.Ready(now, 4)
		if n > 0 {
			p.Took(n)
			sent += n
			continue
		}
		if wait <= 0 {
			t.Fatalf("no packet and no wait at %d", now)
		}
		now += int64(wait)
	}
	if want := uint64(3e6); sent < want || sent > want+1 {
		t.Errorf("sent %d in 1 s at 3 Mpps", sent)
	}
}

func TestPacerBucket(t *testing.T) {
	p := NewPacer(1000, 1, 5) // 1 Mpps, bucket 5
	if n, _ := p.Ready(0, 100); n != 1 {
		t.Fatalf("first call: %d packets, want 1", n)
	}
	p.Took(1)
	// 1 ms late: 1000 packets would be due, the bucket keeps 5.
	if n, _ := p.Ready(1_000_000, 100); n != 5 {
		t.Errorf("after a stall: %d packets, want the bucket's 5", n)
	}
	p.Took(5)
	n, wait := p.Ready(1_000_000, 100)
	if n != 0 || wait != time.Microsecond {
		t.Errorf("after the burst: %d packets, wait %v, want 0 and 1µs", n, wait)
	}
	if n, _ := p.Ready(1_000_000+1000, 100); n != 1 {
		t.Errorf("one period later: %d packets, want 1", n)
	}
}

func TestPacerUnpaced(t *testing.T) {
	p := NewPacer(0, 1, 1)
	if n, w := p.Ready(0, 64); n != 64 || w != 0 {
		t.Errorf("unpaced: %d, %v", n, w)
	}
	if d := DepthFor(1e9, 20000, 5*time.Millisecond, 64); d != 100 {
		t.Errorf("DepthFor 20 kpps over 5 ms = %d, want 100", d)
	}
}
