package report

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/coordinator/campaign"
	"github.com/linerate/linerate/coordinator/results"
)

// SampleLine is a run's live status line: every agent's phase and rates
// from its last sample, by agent name.
func SampleLine(last map[string]coordinator.Sample) string {
	var names []string
	for n := range last {
		names = append(names, n)
	}
	sort.Strings(names)
	var parts []string
	for _, n := range names {
		s := last[n]
		part := fmt.Sprintf("%s %s %s %s", n, s.Phase, results.FormatSI(s.PPS, "pps"), results.FormatSI(s.L2BPS, "b/s"))
		for _, f := range s.Latency {
			part += fmt.Sprintf(", from %s p50 %.0f µs p99 %.0f µs", f.Sender, f.P50US, f.P99US)
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, " | ")
}

// ProgressLine is what a campaign's progress display shows for e,
// elapsed after the campaign began: a trial redraws the status line
// (ok false for other events it does not show), a size's result is a
// line of its own. Both start by clearing the terminal line.
func ProgressLine(e campaign.Event, elapsed time.Duration) (line string, ok bool) {
	const width = 20
	done := 0
	if e.SizesTotal > 0 {
		done = width * e.SizesDone / e.SizesTotal
	}
	bar := fmt.Sprintf("[%s%s]", strings.Repeat("#", done), strings.Repeat(".", width-done))
	switch e.Event {
	case campaign.EventTrial:
		verdict := "pass"
		switch {
		case !e.Valid:
			verdict = "invalid"
		case !e.Passed:
			verdict = "loss"
		}
		phase := e.Phase
		if e.Burst > 0 {
			phase += fmt.Sprintf(" %d frames", e.Burst)
		}
		return fmt.Sprintf("\r\033[K%s sizes %d/%d | %d B trial %d %s at %s: %s | best %s | %s", bar, e.SizesDone, e.SizesTotal, e.Size, e.N,
			phase, results.FormatSI(e.OfferedPPS, "pps"), verdict, results.FormatSI(e.BestPPS, "pps"), elapsed.Round(time.Second)), true
	case campaign.EventSize:
		return fmt.Sprintf("\r\033[K%d B: throughput %s per flow\n", e.Size, results.FormatSI(e.BestPPS, "pps")), true
	}
	return "", false
}
