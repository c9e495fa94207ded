package results

import (
	"encoding/json"
	"time"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/doctor"
	"github.com/linerate/linerate/latency"
)

// Schema is the version of Document; readers refuse other major versions.
const Schema = "linerate.result/v1"

// Kinds of document.
const (
	KindRun      = "run"
	KindCampaign = "campaign"
)

// Document is one stored run or campaign.
type Document struct {
	Schema   string    `json:"schema"`
	ID       string    `json:"id"`   // unique, sortable by time: 20261201T031500Z-3f9a1c
	Kind     string    `json:"kind"` // run or campaign
	Name     string    `json:"name,omitempty"`
	Created  time.Time `json:"created"`
	Finished time.Time `json:"finished"`
	Tool     string    `json:"tool_version"`
	Status   string    `json:"status"` // ok, failed, partial; running, interrupted (campaigns)
	Error    string    `json:"error,omitempty"`
	// Writer is the process that ran the campaign (the last one, when it
	// was resumed): a running document whose writer is gone was
	// interrupted.
	Writer *Writer `json:"writer,omitempty"`
	// Resumed counts the times `campaign resume` continued it.
	Resumed int `json:"resumed,omitempty"`
	// Spec is the campaign spec (or run spec) as given, for the record.
	Spec json.RawMessage `json:"spec,omitempty"`
	// Summary is one row per frame size (campaigns).
	Summary []SizeResult `json:"summary"`
	// Trials are every trial in the order run, valid or not.
	Trials []Trial `json:"trials"`
	// Hosts fingerprint every agent that took part.
	Hosts []Fingerprint `json:"hosts"`
	// Run is the full result of a single run (kind run).
	Run *coordinator.Result `json:"run,omitempty"`
	// Lab is the lab's own truth when the document comes from `linerate lab`.
	Lab *coordinator.PathTruth `json:"lab,omitempty"`
}

// SizeResult is the answer for one frame size (RFC 2544 counts the frame
// with its FCS).
type SizeResult struct {
	Size          int     `json:"size"`            // frame bytes incl. FCS, or 0 for imix
	Label         string  `json:"label,omitempty"` // "imix 7:4:1" for mixes
	ThroughputPPS float64 `json:"throughput_pps"`  // the RFC 2544 throughput (loss ≤ goal), per flow summed over flows
	L1BPS         float64 `json:"l1_bps"`
	LineRatePct   float64 `json:"line_rate_pct"`
	// LinePPS is the line rate this size was measured against, summed
	// over flows as ThroughputPPS is, and LineBasis what set it (a
	// shaper, the busiest link): every table, row, chart and CSV column
	// of the size uses this one. 0 in documents stored before it was
	// kept (the reports then derive it from the hosts' links).
	LinePPS   float64 `json:"line_pps,omitempty"`
	LineBasis string  `json:"line_basis,omitempty"`
	LossRatio float64 `json:"loss_ratio"` // of the trial that set the throughput
	NDRPPS    float64 `json:"ndr_pps,omitempty"`
	PDRPPS    float64 `json:"pdr_pps,omitempty"`
	PDRGoal   float64 `json:"pdr_goal,omitempty"`
	Trials    int     `json:"trials"`
	// ThroughputTrial is the n of the trial that set ThroughputPPS (its
	// flows are the report's per-flow table); 0 when none did.
	ThroughputTrial int `json:"throughput_trial,omitempty"`
	// GeneratorLimited reports that the senders could not offer more than
	// this; the device's limit lies above what could be measured.
	GeneratorLimited bool   `json:"generator_limited,omitempty"`
	Note             string `json:"note,omitempty"`
	// Latency is RFC 2544's latency of the size (section 26.2): every
	// delay of its latency trials (phase "latency", LatencyTrials of
	// them) at the throughput rate, together (absent without the test).
	Latency       *latency.Latency `json:"latency,omitempty"`
	LatencyTrials int              `json:"latency_trials,omitempty"`
	// BackToBack is RFC 2544's back-to-back frames of the size (section
	// 26.4; absent without the test).
	BackToBack *BackToBack `json:"back_to_back,omitempty"`
}

// BackToBack is RFC 2544's back-to-back frames test of one size: the
// longest burst per flow, at RatePPS per flow, that the path carried
// with no loss, searched by burst length in each of its trials (their
// bursts are the campaign's trials of phase "back-to-back").
type BackToBack struct {
	RatePPS float64 `json:"rate_pps"` // per flow: the bursts' rate
	// SearchedFrames is the longest burst searched (the trial length at
	// RatePPS), ResolutionFrames how close the search came.
	SearchedFrames   uint64 `json:"searched_frames"`
	ResolutionFrames uint64 `json:"resolution_frames"`
	// Frames is each trial's longest burst with no loss, per flow (0: even
	// the shortest burst lost frames).
	Frames []uint64 `json:"frames"`
	// MeanFrames is their mean, RFC 2544's back-to-back value; MinFrames
	// and MaxFrames their range; MeanSec the mean burst's duration at
	// RatePPS.
	MeanFrames float64 `json:"mean_frames"`
	MinFrames  uint64  `json:"min_frames"`
	MaxFrames  uint64  `json:"max_frames"`
	MeanSec    float64 `json:"mean_s"`
	// LowerBound reports that some trial's path carried the longest burst
	// searched with no loss: the figures are at least these, not a limit
	// found.
	LowerBound bool `json:"lower_bound,omitempty"`
	// AchievedPPS is the senders' lowest rate per flow over a burst that
	// set a trial's value (bursts of one frame have none), and
	// GeneratorLimited says it fell short of RatePPS: that burst was not
	// back to back.
	AchievedPPS      float64 `json:"achieved_pps,omitempty"`
	GeneratorLimited bool    `json:"generator_limited,omitempty"`
	Bursts           int     `json:"bursts"`
	Note             string  `json:"note,omitempty"`
}

// Trial is one run of a campaign at one offered rate.
type Trial struct {
	N          int     `json:"n"` // 1-based, in the order run
	Size       int     `json:"size"`
	Search     string  `json:"search,omitempty"` // rfc2544, ndr-pdr, none (a sweep)
	Phase      string  `json:"phase,omitempty"`  // search.Phase* (max, binary, ceiling, min, initial, final), sweep, warmup, latency, back-to-back
	OfferedPPS float64 `json:"offered_pps"`      // per flow
	// Burst is the frames per flow of a back-to-back burst (phase
	// "back-to-back"), sent at OfferedPPS; 0 for a trial of a duration.
	Burst uint64 `json:"burst,omitempty"`
	// LinePPS is the size's line rate per flow (SizeResult.LinePPS ÷
	// flows): the flows' line_rate_pct and the loss chart's offered load
	// are of this. 0 in documents stored before it was kept.
	LinePPS          float64            `json:"line_pps,omitempty"`
	DurationSec      float64            `json:"duration_s"`
	Sent             uint64             `json:"sent"`
	Received         uint64             `json:"received"`
	Lost             uint64             `json:"lost"`
	LossRatio        float64            `json:"loss_ratio"`
	AchievedPPS      float64            `json:"achieved_pps"` // per flow, mean
	GeneratorLimited bool               `json:"generator_limited"`
	Valid            bool               `json:"valid"` // false: generator-limited or failed, never counted as loss
	Passed           bool               `json:"passed"`
	RunID            string             `json:"run_id"`
	Error            string             `json:"error,omitempty"`
	Flows            []coordinator.Flow `json:"flows,omitempty"`
}

// Fingerprint is what identifies a host's part in a result.
type Fingerprint struct {
	Name          string               `json:"name"`
	Role          string               `json:"role"`
	Kernel        string               `json:"kernel"`
	Driver        string               `json:"driver"`
	Firmware      string               `json:"firmware,omitempty"`
	NIC           string               `json:"nic,omitempty"` // PCI address / model
	Iface         string               `json:"iface"`
	LinkSpeedMbps int64                `json:"link_speed_mbps"`
	NUMANode      int                  `json:"numa_node"`
	IRQMap        []coordinator.IRQPin `json:"irq_map"`
	Backend       string               `json:"backend,omitempty"`
	Method        string               `json:"method,omitempty"`
	XDPMode       string               `json:"xdp_mode,omitempty"` // the receiver's XDP attach: native or generic
	Version       string               `json:"tool_version,omitempty"`
	// Facts are the host settings its checks read (coordinator.Host's;
	// absent from documents and agents that predate them), their fields
	// at the top of the fingerprint's JSON; their firmware is Firmware
	// above (the NIC's, else the facts').
	doctor.Facts
	// Checks are the verdicts of the host's checks before the run, by
	// check id ("PASS", "WARN", "FAIL").
	Checks map[string]string `json:"checks,omitempty"`
}
