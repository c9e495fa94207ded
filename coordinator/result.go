package coordinator

import (
	"time"

	"github.com/linerate/linerate/doctor"
	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/topology"
)

// Run status values.
const (
	StatusOK     = "ok"     // every phase done, every flow reconciled
	StatusFailed = "failed" // the run ended early: Error names the agent and phase
	// StatusPartial is a run collected but not wholly accounted for: some
	// flows have no result (see Error), or a receiver could not count
	// some test packets (Host.Uncounted, Host.BeyondCapacity,
	// Host.Unrecorded; Warnings say how many and why).
	StatusPartial = "partial"
)

// Result is what `linerate run --json` prints.
type Result struct {
	RunID       string `json:"run_id"`
	Status      string `json:"status"`
	Error       string `json:"error,omitempty"`
	FailedPhase string `json:"failed_phase,omitempty"`
	// StartSkewUS is the agents' own start against the instant: last
	// sender agent's start minus first, and percentiles of how late each
	// agent's start call returned after the instant (its timer), on each
	// agent's clock. The traffic's start is StartSpread.
	StartSkewUS float64 `json:"start_skew_us"`
	// StartAt is the instant every sender was started at (absent from a
	// run that did not get that far, and from documents that predate it).
	StartAt          *time.Time `json:"start_at,omitempty"`
	StartOffsetP50US float64    `json:"start_offset_p50_us"`
	StartOffsetP99US float64    `json:"start_offset_p99_us"`
	// StartSpread is the start measured at the traffic: each stream's
	// first frame and first arrival (absent from a run without them, and
	// from documents that predate it).
	StartSpread *StartSpread `json:"start_spread,omitempty"`
	Pattern     Pattern      `json:"pattern"`
	FrameSize   int          `json:"frame_size"`
	IMIX        pktgen.IMIX  `json:"imix,omitempty"`     // the mix sent instead of frame_size
	RatePPS     uint64       `json:"rate_pps,omitempty"` // offered per flow; 0 = as fast as possible
	// Copies is how many times each built frame was sent (kernel
	// pktgen's burst × clone_skb: Spec.Copies; absent: once): sent and
	// received count every copy, a stream's max_seq and missing its
	// built frames.
	Copies int `json:"copies,omitempty"`
	// Burst is kernel pktgen's burst, of the Copies (absent: 1). With
	// bursts every copy that arrived is counted as received, duplicates
	// too (Stream.lost says why).
	Burst int `json:"burst,omitempty"`
	// Latency is what the run timed (absent from documents that predate
	// it: one way).
	Latency  LatencyMode `json:"latency_mode,omitempty"`
	Started  time.Time   `json:"started"`
	Finished time.Time   `json:"finished"`
	Flows    []Flow      `json:"flows"`
	// Directions are the flows of each direction taken together, in a
	// run that turns flows round (--bidir, --reverse; absent otherwise).
	Directions []DirectionTotal `json:"directions,omitempty"`
	Hosts      []Host           `json:"hosts"`
	Warnings   []string         `json:"warnings,omitempty"`
	// Lab is the lab's own truth (switch port counters), added by
	// `linerate lab run`.
	Lab *PathTruth `json:"lab,omitempty"`
}

// Host is one agent's part in a run.
type Host struct {
	Name          string       `json:"name"`
	Role          string       `json:"role"` // sender, receiver or both (--bidir) in this run
	Kernel        string       `json:"kernel"`
	Iface         string       `json:"iface"`
	Driver        string       `json:"driver"`
	Firmware      string       `json:"firmware,omitempty"`
	Model         string       `json:"model,omitempty"` // PCI vendor:device
	PCI           string       `json:"pci,omitempty"`
	NUMANode      int          `json:"numa_node"`
	LinkSpeedMbps int64        `json:"link_speed_mbps"`
	IRQMap        []IRQPin     `json:"irq_map"`
	ManagedIRQs   []IRQPin     `json:"managed_irqs,omitempty"` // kernel-managed: left where the kernel put them
	SkippedIRQs   []SkippedIRQ `json:"skipped_irqs"`
	Tuned         string       `json:"tuned"` // "applied", "restored", "kept", "not tuned: why"
	Backend       string       `json:"backend,omitempty"`
	// BackendNotes say what the sender's backend chose for the run and
	// why (the afxdp backend: copy or zero-copy, need_wakeup on or off),
	// as its summary gave them; MethodReason says the same of the
	// receiver's method.
	BackendNotes []string   `json:"backend_notes,omitempty"`
	Method       string     `json:"method,omitempty"`
	MethodReason string     `json:"method_reason,omitempty"`
	XDPMode      string     `json:"xdp_mode,omitempty"` // receiver.XDPNative or XDPGeneric
	CPUs         []int      `json:"cpus,omitempty"`     // sender threads' CPUs
	StartedAt    *time.Time `json:"started_at,omitempty"`
	// Clock is the host's clock discipline (absent from an agent that
	// predates it).
	Clock       *Clock `json:"clock,omitempty"`
	Sent        uint64 `json:"sent,omitempty"`
	SendErrors  uint64 `json:"send_errors,omitempty"`
	TxDropped   uint64 `json:"tx_dropped,omitempty"`
	Received    uint64 `json:"received,omitempty"`     // receiver: test packets counted
	OtherFrames uint64 `json:"other_frames,omitempty"` // receiver: frames without the pktgen header (ARP, ND, …)
	HostDrops   uint64 `json:"host_drops,omitempty"`   // receiver: rx_dropped + rx_missed + rx_fifo + ring drops
	// Uncounted (receiver) are test packets of streams beyond its stream
	// table: they arrived but are in no stream's count. BeyondCapacity
	// are packets with sequence 0 (outside pktgen's numbering): received,
	// not checked for duplicates, order or gaps. Unrecorded are packets
	// its XDP program could not record in their stream's window (CPUs
	// contending for one word): each a distinct sequence or a duplicate,
	// which the count cannot tell. Any of them makes the run partial.
	Uncounted      uint64 `json:"uncounted,omitempty"`
	BeyondCapacity uint64 `json:"beyond_capacity,omitempty"`
	Unrecorded     uint64 `json:"unrecorded,omitempty"`
	// IRQVerify is where the NIC's queue IRQs fired over the host's part
	// of the traffic (a sender's send, a receiver's Arm to its collect),
	// from /proc/interrupts read at both ends, against the CPUs the run's
	// tuning pinned each to ("source": "journal"), or its affinity when
	// the run did not tune it ("affinity"). Absent with IRQVerifyReason
	// when there is none: a NIC without queue IRQs, an agent that could
	// not read them or predates it; absent without a reason from a run
	// that ended before the host's traffic did.
	IRQVerify       *topology.VerifyResult `json:"irq_verify,omitempty"`
	IRQVerifyReason string                 `json:"irq_verify_reason,omitempty"`
	// ClockOffset is the host's clock against the coordinator's, as the
	// run measured it (absent: not measured, or a document that predates
	// it).
	ClockOffset *ClockOffset `json:"clock_offset,omitempty"`
	// Checks are the host's checks (doctor) for the run, made by its agent
	// before any lease, in report order (absent from an agent that
	// predates them); Facts the settings the run ran under, for the
	// fingerprint: those the checks read, or, when --preflight fix changed
	// some, those read again after the fixes.
	Checks []doctor.Check `json:"checks,omitempty"`
	Facts  *doctor.Facts  `json:"facts,omitempty"`
	// Fixed are the settings --preflight fix changed on the host, as its
	// Tune read them back; FixesRestored says the release restored every
	// one of them (with the IRQs), as its agent's answer listed them.
	Fixed         []doctor.Applied `json:"fixed,omitempty"`
	FixesRestored bool             `json:"fixes_restored,omitempty"`
	// Notes are facts of the host's part that ask nothing of a person
	// (its queues wrapped onto fewer CPUs: its agent's IRQ plan said so
	// in its Tune answer); Warnings are what a person should act on.
	Notes    []string `json:"notes,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// ClockOffset is a host's realtime clock against the coordinator's,
// measured over the control connection before the traffic (OffsetUS,
// within BoundUS: half the lowest round trip) and after it (DriftUS: how
// far it moved).
type ClockOffset struct {
	OffsetUS float64 `json:"offset_us"`
	BoundUS  float64 `json:"bound_us"`
	DriftUS  float64 `json:"drift_us"`
	Samples  int     `json:"samples"`
}

// IRQPin is one queue IRQ pinned to a CPU.
type IRQPin struct {
	Queue int    `json:"queue"`
	IRQ   int    `json:"irq"`
	CPU   int    `json:"cpu"`
	Name  string `json:"name,omitempty"`
	Dir   string `json:"dir,omitempty"`
}

// SkippedIRQ is an IRQ of the NIC that was not pinned, and why.
type SkippedIRQ struct {
	IRQ    int    `json:"irq"`
	Name   string `json:"name"`
	Reason string `json:"reason"`
}
