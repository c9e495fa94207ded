package coordinator

import (
	"encoding/json"
	"fmt"
	"time"
)

// EventName names an event of a run's `--json-stream` output (its
// "event" key).
type EventName string

// The events of a run's stream: phase changes and live samples while it
// runs, then its result.
const (
	EventPhase  EventName = "phase"
	EventSample EventName = "sample"
	EventResult EventName = "result"
)

// Sample is one agent's live counters during a run (`--json-stream`).
type Sample struct {
	Event   EventName `json:"event"` // EventSample
	Time    time.Time `json:"time"`
	Agent   string    `json:"agent"`
	Role    string    `json:"role"`
	Phase   string    `json:"phase"`
	Packets uint64    `json:"packets"`
	Errors  uint64    `json:"errors,omitempty"`
	PPS     float64   `json:"pps"`
	L2BPS   float64   `json:"l2_bps"`
	// Latency (a receiver's) is each of its flows' delays so far, by
	// sender (absent when it times none).
	Latency []FlowLatency `json:"latency,omitempty"`
}

// FlowLatency is a flow's running delays in a receiver's live sample.
type FlowLatency struct {
	Sender  string  `json:"sender"`
	Samples uint64  `json:"samples"`
	P50US   float64 `json:"p50_us"`
	P99US   float64 `json:"p99_us"`
}

// PhaseEvent marks the run entering a phase (`--json-stream`).
type PhaseEvent struct {
	Event EventName `json:"event"` // EventPhase
	Time  time.Time `json:"time"`
	Phase string    `json:"phase"`
}

// ResultEvent is the last line of a `--json-stream`: result (a run's
// Result, a campaign's document: any JSON object) with "event": "result"
// before its own fields.
func ResultEvent(result any) (json.RawMessage, error) {
	b, err := json.Marshal(result)
	if err != nil {
		return nil, fmt.Errorf("result as JSON: %w", err)
	}
	if len(b) < 2 || b[0] != '{' {
		return nil, fmt.Errorf("result as JSON: %T is not a JSON object", result)
	}
	return append([]byte(`{"event":"`+string(EventResult)+`",`), b[1:]...), nil
}
