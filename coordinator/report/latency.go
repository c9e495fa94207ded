package report

import (
	"fmt"

	"github.com/linerate/linerate/latency"
)

// clockText is the clock delays are on, with its bound in whole µs when
// it has one: "same-host", "estimated ±420".
func clockText(l *latency.Latency) string {
	if l.ClockErrorUs > 0 {
		return fmt.Sprintf("%s ±%.0f", l.Clock, l.ClockErrorUs)
	}
	return string(l.Clock)
}
