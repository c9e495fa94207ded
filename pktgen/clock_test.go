package pktgen

import (
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// pktgen's "started:" of a real device file, moved onto the wall clock
// with an offset read at one moment; an unknown start stays unknown.
func TestRealtimeOf(t *testing.T) {
	f, err := os.Open("testdata/files/v6.12-veth0@0")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	df, err := ParseDeviceFile("v6.12-veth0@0", f)
	if err != nil {
		t.Fatal(err)
	}
	const offset = 1_764_000_000_000_000_000 // realtime − monotonic, ns
	if got, want := RealtimeOf(df.Current.StartedUS, offset), uint64(offset+1933264893*1000); got != want {
		t.Errorf("started %d µs: %d, want %d", df.Current.StartedUS, got, want)
	}
	for _, tt := range []struct {
		us  uint64
		off int64
	}{{0, offset}, {5, -10_000}, {1 << 62, 0}} {
		if got := RealtimeOf(tt.us, tt.off); got != 0 {
			t.Errorf("RealtimeOf(%d, %d) = %d, want 0 (unknown)", tt.us, tt.off, got)
		}
	}
}

// The host's offset puts CLOCK_MONOTONIC's now at the wall clock's now.
func TestMonoOffset(t *testing.T) {
	off, err := MonoOffset()
	if err != nil {
		t.Skip(err) // not Linux
	}
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	got := time.Unix(0, int64(RealtimeOf(uint64(ts.Nano()/1000), off)))
	if d := now.Sub(got); d < -time.Millisecond || d > time.Millisecond {
		t.Errorf("offset %d puts CLOCK_MONOTONIC's now at %s, the wall clock says %s (%s apart)", off, got, now, d)
	}
}

// A reading preempted between its realtime reads is passed over for a
// tight one; the first good one ends the search; an error is returned.
func TestBestOffset(t *testing.T) {
	readings := [][3]int64{
		{1000, 10, 5_001_000},             // preempted 5 ms: midpoint off by 2.5 ms
		{6_000_000, 5_000_500, 6_003_000}, // 3 µs: still too wide
		{7_000_000, 6_000_000, 7_000_300}, // good: ends it
		{9, 9, 9},
	}
	i := 0
	off, err := bestOffset(func() (int64, int64, int64, error) {
		r := readings[i]
		i++
		return r[0], r[1], r[2], nil
	})
	if err != nil || off != 7_000_150-6_000_000 || i != 3 {
		t.Errorf("offset %d after %d readings (%v), want %d after 3", off, i, err, 7_000_150-6_000_000)
	}
	// Every reading wide: the narrowest wins, after offsetTries.
	i = 0
	off, _ = bestOffset(func() (int64, int64, int64, error) {
		i++
		w := int64(1_000_000 - i*1000)
		return 0, 0, w, nil
	})
	if i != offsetTries || off != (1_000_000-int64(offsetTries)*1000)/2 {
		t.Errorf("offset %d after %d readings, want the narrowest's after %d", off, i, offsetTries)
	}
	if _, err := bestOffset(func() (int64, int64, int64, error) { return 0, 0, 0, os.ErrPermission }); err == nil {
		t.Error("a failed read: want its error")
	}
}
