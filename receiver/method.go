package receiver

// counts is what a method reports: streams and totals.
type counts struct {
	streams   []StreamReport
	other     uint64
	overflow  uint64
	ringDrops uint64
}

// method is one way of counting (XDP, AF_PACKET), already running.
type method interface {
	// snapshot returns live counts (no missing ranges).
	snapshot() (counts, error)
	// stop stops counting (detaches) and returns the final counts.
	stop() (counts, error)
	// close releases everything; safe after stop and on its own.
	close() error
}
