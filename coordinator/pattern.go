package coordinator

import (
	"fmt"
	"slices"

	"github.com/linerate/linerate/internal/enum"
)

// Pattern is how a run pairs its senders and receivers into flows, as a
// run's spec, a campaign spec and --pattern give it.
type Pattern string

// Patterns a run can pair senders and receivers in.
const (
	Pairwise Pattern = "pairwise" // sender i → receiver i
	FanIn    Pattern = "fan-in"   // every sender → the one receiver (N:1)
	FanOut   Pattern = "fan-out"  // the one sender → every receiver (1:N)
	Mesh     Pattern = "mesh"     // every sender → every receiver
)

// Patterns lists the valid patterns, the default first: the one list
// every validator, error and flag help says.
var Patterns = []Pattern{Pairwise, FanIn, FanOut, Mesh}

// Check is nil when p is one of Patterns; otherwise it names p and the
// valid patterns, for the caller to prefix with its field.
func (p Pattern) Check() error {
	if slices.Contains(Patterns, p) {
		return nil
	}
	return fmt.Errorf("%q: valid patterns are %s", p, enum.And(Patterns))
}

// Pair is one flow of a plan: who sends to whom, and, in a run that
// turns flows round (Spec.Bidir, Spec.Reverse), which way it goes.
type Pair struct {
	Sender, Receiver string
	Direction        Direction // "" in a run that goes one way only
}

// Pairs plans the flows of a pattern over the named agents, in a stable
// order (senders as given, then receivers as given).
func Pairs(pattern Pattern, senders, receivers []string) ([]Pair, error) {
	if len(senders) == 0 || len(receivers) == 0 {
		return nil, fmt.Errorf("pattern %s: %d senders and %d receivers: want at least one of each", pattern, len(senders), len(receivers))
	}
	for _, names := range [][]string{senders, receivers} {
		for i, n := range names {
			if slices.Contains(names[:i], n) {
				return nil, fmt.Errorf("pattern %s: agent %q named twice", pattern, n)
			}
		}
	}
	for _, s := range senders {
		if slices.Contains(receivers, s) {
			return nil, fmt.Errorf("pattern %s: agent %q is both a sender and a receiver of this run", pattern, s)
		}
	}
	var out []Pair
	switch pattern {
	case Pairwise:
		if len(senders) != len(receivers) {
			return nil, fmt.Errorf("pattern pairwise: %d senders and %d receivers: want as many of each (or use fan-in, fan-out, mesh)", len(senders), len(receivers))
		}
		for i := range senders {
			out = append(out, Pair{Sender: senders[i], Receiver: receivers[i]})
		}
	case FanIn:
		if len(receivers) != 1 {
			return nil, fmt.Errorf("pattern fan-in: %d receivers: want exactly one", len(receivers))
		}
		for _, s := range senders {
			out = append(out, Pair{Sender: s, Receiver: receivers[0]})
		}
	case FanOut:
		if len(senders) != 1 {
			return nil, fmt.Errorf("pattern fan-out: %d senders: want exactly one", len(senders))
		}
		for _, r := range receivers {
			out = append(out, Pair{Sender: senders[0], Receiver: r})
		}
	case Mesh:
		for _, s := range senders {
			for _, r := range receivers {
				out = append(out, Pair{Sender: s, Receiver: r})
			}
		}
	default:
		return nil, fmt.Errorf("pattern %w", pattern.Check())
	}
	return out, nil
}
