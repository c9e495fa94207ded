package coordinator

import (
	"fmt"

	"github.com/linerate/linerate/latency"
)

// stateLatencyClocks sets the clock of every flow's delays and of its
// streams' (the receiver knows only its own clock) as clockOf says of
// its two hosts, and warns of each flow whose delays are on clocks
// nothing relates.
func stateLatencyClocks(flows []Flow, clockOf func(sender, receiver string) (latency.Clock, float64)) (warnings []string) {
	for i := range flows {
		f := &flows[i]
		if f.Latency == nil {
			continue
		}
		c, errUs := clockOf(f.Sender, f.Receiver)
		f.Latency.Clock, f.Latency.ClockErrorUs = c, errUs
		for j := range f.StreamDetail {
			if l := f.StreamDetail[j].Latency; l != nil {
				l.Clock, l.ClockErrorUs = c, errUs
			}
		}
		if c == latency.Unsynchronised {
			warnings = append(warnings, fmt.Sprintf("latency %s → %s: the two clocks are not synchronised and not measured against each other: only the delays' spread (jitter, PDV) means something, not their level; synchronise both hosts (chrony, PTP), or use agents that answer the Clock call", f.Sender, f.Receiver))
		}
	}
	return warnings
}
