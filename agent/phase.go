package agent

// phase is where the sender or the receiver is in its lifecycle (the
// agent's own state; convert.go maps it to the proto's Phase).
type phase int

// The phases. A sender goes idle → configured → scheduled → running →
// done or failed (and back to configured by Configure); a receiver idle →
// armed → idle.
const (
	phaseIdle phase = iota
	phaseConfigured
	phaseScheduled
	phaseRunning
	phaseDone
	phaseFailed
	phaseArmed
)

var phaseNames = [...]string{"idle", "configured", "scheduled", "running", "done", "failed", "armed"}

func (p phase) String() string {
	if p >= 0 && int(p) < len(phaseNames) {
		return phaseNames[p]
	}
	return "unknown"
}

// sending tells whether a send is under way (scheduled or running).
func (p phase) sending() bool { return p == phaseScheduled || p == phaseRunning }
