package pktgen

// Summary is what a send reports, the same for every backend
// (`linerate send --json`).
type Summary struct {
	Backend string  `json:"backend"`
	Device  string  `json:"device"`
	Packets uint64  `json:"packets"`
	Errors  uint64  `json:"errors"`
	USec    uint64  `json:"usec"` // the run's window, first start to last stop
	PPS     float64 `json:"pps"`
	// L2BPS counts Ethernet frames including the FCS, L1BPS adds the
	// preamble, SFD and inter-frame gap: a frame of s bytes without FCS
	// costs s+4 bytes at L2 and s+24 on the wire.
	L2BPS      float64         `json:"l2_bps"`
	L1BPS      float64         `json:"l1_bps"`
	FrameBytes float64         `json:"frame_bytes"` // mean frame size without FCS
	Threads    []ThreadSummary `json:"threads"`
	// Notes say what the backend chose for this run and why (not
	// something to act on: that is a warning): the AF_XDP sockets' mode
	// and need_wakeup.
	Notes       []string `json:"notes,omitempty"`
	Warnings    []string `json:"warnings,omitempty"`
	Interrupted bool     `json:"interrupted,omitempty"`
}

// ThreadSummary is one sender thread: one CPU, one sequence stream. For
// the kernel backend it is one pktgen device entry; several may share a
// CPU's kpktgend thread, each on its own TX queue.
type ThreadSummary struct {
	CPU   int    `json:"cpu"`
	Entry string `json:"entry,omitempty"` // pktgen device entry, "eth0@2", or "eth0@2q0" on queue 0
	// Queue is the TX queue the stream was pinned to (queue_map_min =
	// max); nil when none was.
	Queue   *int    `json:"queue,omitempty"`
	Src     string  `json:"src,omitempty"` // the stream's source address
	Packets uint64  `json:"packets"`
	Errors  uint64  `json:"errors"`
	USec    uint64  `json:"usec"`
	PPS     float64 `json:"pps"`
	// FirstFrameNs is when the thread's first frame went, as Unix ns of
	// the sending host's CLOCK_REALTIME (0: unknown): the userspace
	// backends' stamp in that frame (or the clock read at its send), the
	// kernel's pktgen its own start of the stream ("started:" of its
	// device entry's file, each entry its own even when several share a
	// thread; CLOCK_MONOTONIC moved onto CLOCK_REALTIME).
	FirstFrameNs uint64 `json:"first_frame_ns,omitempty"`
	// PacingWaitUSec is how long kernel pktgen's thread waited out its
	// pacing gaps in all (its Result's idle time, "d"): it writes each
	// frame's stamp before that wait, so the stamps were early by this
	// over Packets on average. 0 for the userspace backends, which stamp
	// as they send, and for an unpaced thread.
	PacingWaitUSec uint64 `json:"pacing_wait_usec,omitempty"`
}

// Seconds is the run's window (USec) in seconds.
func (s *Summary) Seconds() float64 { return float64(s.USec) / 1e6 }

// rate is packets per second over usec microseconds.
func rate(packets, usec uint64) float64 {
	if usec == 0 {
		return 0
	}
	return float64(packets) * 1e6 / float64(usec)
}

// finish fills the totals from the threads.
func (s *Summary) finish(frameBytes float64) {
	s.Packets, s.Errors = 0, 0
	for _, t := range s.Threads {
		s.Packets += t.Packets
		s.Errors += t.Errors
	}
	s.FrameBytes = frameBytes
	s.PPS = rate(s.Packets, s.USec)
	s.L2BPS = L2Bits(s.PPS, frameBytes)
	s.L1BPS = L1Bits(s.PPS, frameBytes)
}
