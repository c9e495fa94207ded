package receiver

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/linerate/linerate/latency"
)

// knownDelays are delays in µs that the latency tests stamp frames
// with: exact values, bucket edges, the absurd and the negative.
var knownDelays = []int64{0, 1, 63, 64, 65, 1000, 4999, 5000, 123456, latency.AbsurdUs - 10000, latency.AbsurdUs, -1000}

// The Go core's delay of each frame is its arrival (the ring's time)
// less the send time its header carries: with the arrival known, the
// histogram is exactly a recorder's of the known delays.
func TestTableLatencyKnownDelays(t *testing.T) {
	const arrivalUs = 1_780_000_000_000_000 // 2026, in µs
	tab, err := NewTable(Options{Clock: latency.SameHost})
	if err != nil {
		t.Fatal(err)
	}
	var want latency.Recorder
	for i, d := range knownDelays {
		tab.frameNs = arrivalUs*1000 + 999 // the arrival's ns below the µs do not count
		tab.Add(testFrame{seq: uint32(i + 1), sentUs: uint64(arrivalUs - d)}.bytes())
		want.Record(d)
	}
	streams, _, _ := tab.Streams(0)
	if len(streams) != 1 || streams[0].Latency == nil {
		t.Fatalf("streams %+v", streams)
	}
	got := streams[0].Latency
	if got.Histogram != want.H || got.Clock != latency.SameHost {
		t.Errorf("latency %+v, want %+v on %s", got.Summary(), want.H.Summary(), latency.SameHost)
	}
	if got.Samples() != streams[0].Received || got.Negative != 1 || got.Absurd != 1 || got.MinUs != 0 || got.MaxUs != latency.AbsurdUs-10000 {
		t.Errorf("latency %+v over %d packets", got.Summary(), streams[0].Received)
	}

	off, err := NewTable(Options{Latency: LatencyOff})
	if err != nil {
		t.Fatal(err)
	}
	off.Add(testFrame{seq: 1}.bytes())
	if s, _, _ := off.Streams(0); len(s) != 1 || s[0].Latency != nil {
		t.Errorf("latency off: %+v", s)
	}
}

// latencyJSON is l as a report shows it, for errors.
func latencyJSON(l *latency.Latency) string {
	b, err := json.Marshal(l)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// A port's clock correction is added to every delay of its streams, and
// to no other's: a sender whose clock is 5 s ahead stamps 5 s late, and
// its delays come out as they were.
func TestTableClockCorrections(t *testing.T) {
	const arrivalUs = 1_780_000_000_000_000
	const ahead = 10009
	tab, err := NewTable(Options{ClockCorrections: map[uint16]time.Duration{ahead: 5 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	tab.frameNs = arrivalUs * 1000
	tab.Add(testFrame{port: ahead, seq: 1, sentUs: arrivalUs - 700 + 5e6}.bytes())
	tab.Add(testFrame{seq: 1, sentUs: arrivalUs - 700}.bytes())
	streams, _, _ := tab.Streams(0)
	for _, s := range streams {
		if l := s.Latency; l == nil || l.Samples() != 1 || l.MinUs != 700 {
			t.Errorf("stream to port %d: latency %s, want one delay of 700 µs", s.DstPort, latencyJSON(l))
		}
	}
	for _, bad := range []map[uint16]time.Duration{{ahead: 25 * time.Hour}, {9: -25 * time.Hour}} {
		if _, err := NewTable(Options{ClockCorrections: bad}); err == nil || !strings.Contains(err.Error(), "ClockCorrections") {
			t.Errorf("corrections %v: %v, want an error naming them", bad, err)
		}
	}
}
