package coordinator

import (
	"github.com/linerate/linerate/latency"
	"github.com/linerate/linerate/pktgen"
)

// stampCorrected returns a stream's delays with its thread's early stamps
// taken off (a copy: the receiver's report is left as it came). Kernel
// pktgen writes a frame's send time when it builds the frame and then
// waits out its pacing gap (net/core/pktgen.c: fill_packet, then spin),
// so a paced frame's stamp is early by the time it waited; pktgen adds
// every such wait up (pktgen.DeviceFile.PacingWaitUSec), so the mean per
// frame is measured, not guessed from the rate. How the waits vary
// around their mean stays in the delays. The userspace backends stamp
// as they send: they report no wait and nothing changes.
func stampCorrected(l *latency.Latency, t pktgen.ThreadSummary) *latency.Latency {
	if t.PacingWaitUSec == 0 || t.Packets == 0 {
		return l
	}
	return l.StampsEarly(float64(t.PacingWaitUSec) / float64(t.Packets))
}
