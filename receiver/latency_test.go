package receiver

import (
	"encoding/json"
	"testing"

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
