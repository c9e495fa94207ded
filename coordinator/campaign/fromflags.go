package campaign

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/coordinator/search"
	"github.com/linerate/linerate/pktgen"
)

// Options are a campaign described by command-line flags rather than a
// spec file (`linerate lab campaign` without SPEC.yaml). Zero values are
// the spec's defaults, as a field left out of a spec file is.
type Options struct {
	Name               string
	Senders, Receivers []string
	Pattern            coordinator.Pattern
	Sizes              []Size // frame sizes including FCS, or the imix
	Rates              []Rate // a sweep's offered rates per flow (search none)
	// Search is the search type; LossGoal, Resolution, Min and Max apply
	// to a search (they are left out of a sweep, search.TypeNone).
	Search       search.Type
	LossGoal     float64
	Resolution   Rate
	Min, Max     Rate
	Duration     time.Duration // of each trial
	Backend      pktgen.BackendName
	Threads      int
	Pause, Drain time.Duration // between trials; after the senders stop
	Shortfall    Shortfall
	IPv6         bool // every trial over IPv6 (the spec's ipv6)
	VLAN         int  // every frame tagged with this VLAN id (the spec's vlan; 0: untagged)
}

// FromOptions builds the spec o describes and validates it as Parse
// validates a spec file (the same errors, naming the spec's fields). It
// also returns the spec as given, as JSON, for the campaign's record
// (RunCampaign's raw): only the fields o sets, as a spec file would
// hold them.
func FromOptions(o Options) (*Spec, []byte, error) {
	s := &Spec{
		Name: o.Name, Agents: Agents{Senders: o.Senders, Receivers: o.Receivers}, Pattern: o.Pattern,
		Sizes: o.Sizes, Rates: o.Rates, Search: Search{Type: o.Search}, Duration: Duration(o.Duration),
		Backend: o.Backend, Threads: o.Threads, Between: Between{Pause: Duration(o.Pause)}, Drain: Duration(o.Drain),
		Shortfall: o.Shortfall, IPv6: o.IPv6, VLAN: o.VLAN,
	}
	if o.Search != search.TypeNone {
		s.Search.LossGoal, s.Search.Resolution, s.Search.Min, s.Search.Max = o.LossGoal, o.Resolution, o.Min, o.Max
	}
	record, err := json.Marshal(given(s))
	if err != nil {
		return nil, nil, fmt.Errorf("campaign spec %q as JSON: %w", o.Name, err)
	}
	if err := s.validate(); err != nil {
		return nil, nil, err
	}
	return s, record, nil
}

// ParseSize reads a frame size: bytes including FCS (64, "1518") or
// "imix".
func ParseSize(s string) (Size, error) {
	t := strings.TrimSpace(s)
	if strings.EqualFold(t, "imix") {
		return Size{IMIX: true}, nil
	}
	v, err := strconv.Atoi(t)
	if err != nil {
		return Size{}, fmt.Errorf("frame size %q: want bytes including FCS (%d-%d) or imix", s, pktgen.MinFrameSize, pktgen.MaxFrameSize)
	}
	return Size{Bytes: v}, nil
}

// givenSpec is a spec as a spec file holds it: the record of a spec
// built from Options, in the spec file's field names.
type givenSpec struct {
	Name      string              `json:"name,omitempty"`
	Agents    *givenAgents        `json:"agents,omitempty"`
	Pattern   coordinator.Pattern `json:"pattern,omitempty"`
	Sizes     []givenSize         `json:"frame_sizes,omitempty"`
	Threads   int                 `json:"threads"`
	Backend   pktgen.BackendName  `json:"backend,omitempty"`
	Duration  string              `json:"trial_duration,omitempty"`
	Rates     []givenRate         `json:"rates,omitempty"`
	Search    givenSearch         `json:"search"`
	Between   *givenBetween       `json:"between_trials,omitempty"`
	Drain     string              `json:"drain,omitempty"`
	Shortfall Shortfall           `json:"shortfall,omitempty"`
	IPv6      bool                `json:"ipv6,omitempty"`
	VLAN      int                 `json:"vlan,omitempty"`
}

// givenSize is a frame size as a spec file's list holds it: a number of
// bytes, or "imix".
type givenSize Size

func (z givenSize) MarshalJSON() ([]byte, error) {
	if z.IMIX {
		return json.Marshal("imix")
	}
	return json.Marshal(z.Bytes)
}

// givenRate is a rate as a spec file's list holds it: a number of packets
// per second, or "N%".
type givenRate Rate

func (r givenRate) MarshalJSON() ([]byte, error) {
	if r.Percent > 0 {
		return json.Marshal(rateText(Rate(r)))
	}
	return json.Marshal(r.PPS)
}

type givenAgents struct {
	Senders   []string `json:"senders"`
	Receivers []string `json:"receivers"`
}

type givenSearch struct {
	Type       search.Type `json:"type,omitempty"`
	LossGoal   *float64    `json:"loss_goal,omitempty"`
	Resolution string      `json:"resolution,omitempty"`
	Min        string      `json:"min_rate,omitempty"`
	Max        string      `json:"max_rate,omitempty"`
}

type givenBetween struct {
	Pause string `json:"pause"`
}

// given is s before validation fills its defaults, as a spec file
// would give it: sizes as numbers (or "imix"), rates as numbers of
// packets per second or "N%", durations as Go durations.
func given(s *Spec) givenSpec {
	g := givenSpec{Name: s.Name, Pattern: s.Pattern, Threads: s.Threads, Backend: s.Backend, Shortfall: s.Shortfall, IPv6: s.IPv6, VLAN: s.VLAN,
		Search: givenSearch{Type: s.Search.Type}}
	if len(s.Agents.Senders) > 0 || len(s.Agents.Receivers) > 0 {
		g.Agents = &givenAgents{Senders: s.Agents.Senders, Receivers: s.Agents.Receivers}
	}
	for _, z := range s.Sizes {
		g.Sizes = append(g.Sizes, givenSize(z))
	}
	for _, r := range s.Rates {
		g.Rates = append(g.Rates, givenRate(r))
	}
	if s.Search.Type != search.TypeNone {
		goal := s.Search.LossGoal
		g.Search.LossGoal = &goal
		g.Search.Resolution, g.Search.Min, g.Search.Max = rateText(s.Search.Resolution), rateText(s.Search.Min), rateText(s.Search.Max)
	}
	if s.Duration != 0 {
		g.Duration = time.Duration(s.Duration).String()
	}
	if s.Between.Pause != 0 {
		g.Between = &givenBetween{Pause: time.Duration(s.Between.Pause).String()}
	}
	if s.Drain != 0 {
		g.Drain = time.Duration(s.Drain).String()
	}
	return g
}

// rateText is a rate as a spec file's string holds it: "N%" or a number
// of packets per second ("" for none).
func rateText(r Rate) string {
	switch {
	case r.Percent > 0:
		return strconv.FormatFloat(r.Percent, 'f', -1, 64) + "%"
	case r.PPS > 0:
		return strconv.FormatFloat(r.PPS, 'f', -1, 64)
	}
	return ""
}
