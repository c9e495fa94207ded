package report

import (
	"fmt"
	"io"
	"time"

	"github.com/linerate/linerate/coordinator/results"
)

// sizeBackToBackTable writes each size's RFC 2544 back-to-back frames
// (per flow: the mean of its trials' longest bursts with no loss, their
// range, the mean burst's duration at the bursts' rate, the longest
// burst searched), "≥" where the path carried the longest burst searched
// (a lower bound), and the test's notes (nothing when no size has the
// test).
func sizeBackToBackTable(w io.Writer, sizes []sizeView) {
	var tested []sizeView
	for _, s := range sizes {
		if s.BackToBack != nil {
			tested = append(tested, s)
		}
	}
	if len(tested) == 0 {
		return
	}
	section(w, tested, "BACK-TO-BACK\tRATE/FLOW\tTRIALS\tMEAN\tMIN\tMAX\tMEAN BURST\tSEARCHED\tBURSTS\t", func(tw io.Writer, s sizeView) {
		b, atLeast := s.BackToBack, ""
		if b.LowerBound {
			atLeast = "≥"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s%.1f\t%d\t%s%d\t%s\t%d\t%d\t\n", s.Key, results.FormatPPS(b.RatePPS), len(b.Frames), atLeast, b.MeanFrames,
			b.MinFrames, atLeast, b.MaxFrames, burstTime(b.MeanSec), b.SearchedFrames, b.Bursts)
	})
	fmt.Fprintln(w, "back-to-back: frames per flow of the longest burst with no loss, in each trial (RFC 2544 26.4); ≥: the path carried the longest burst searched")
	for _, s := range tested {
		if s.BackToBack.Note != "" {
			fmt.Fprintf(w, "%s: back-to-back: %s\n", s.Key, s.BackToBack.Note)
		}
	}
}

// burstTime is a burst's duration to a thousandth of its unit: "7.77ms", "2s".
func burstTime(sec float64) string {
	d := time.Duration(sec * float64(time.Second))
	for _, unit := range []time.Duration{time.Second, time.Millisecond, time.Microsecond} {
		if d >= unit {
			return d.Round(unit / 1000).String()
		}
	}
	return d.String()
}
