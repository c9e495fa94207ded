package coordinator

import (
	"fmt"
	"slices"

	"github.com/linerate/linerate/internal/cluster/gossip"
)

// Direction is which way a flow goes between the hosts a spec names as
// senders and those it names as receivers, in a run that turns flows
// round (Spec.Bidir, Spec.Reverse).
type Direction string

// The directions of a flow.
const (
	Forward Direction = "forward" // a named sender to a named receiver
	Reverse Direction = "reverse" // a named receiver to a named sender
)

// FlowPairs are the run's flows: the pattern's pairs of the named senders
// and receivers (Pairs); with Reverse each turned round, the named
// receivers sending; with Bidir the pattern's pairs and then each turned
// round, so that every pair sends both ways at once. In a run that turns
// flows round every pair says its Direction; otherwise none does.
func (s *Spec) FlowPairs() ([]Pair, error) {
	pairs, err := Pairs(s.Pattern, s.Senders, s.Receivers)
	if err != nil || !s.Bidir && !s.Reverse {
		return pairs, err
	}
	var out []Pair
	if s.Bidir {
		for _, p := range pairs {
			out = append(out, Pair{Sender: p.Sender, Receiver: p.Receiver, Direction: Forward})
		}
	}
	for _, p := range pairs {
		out = append(out, Pair{Sender: p.Receiver, Receiver: p.Sender, Direction: Reverse})
	}
	return out, nil
}

// checkDirections refuses Bidir and Reverse together: Bidir already
// sends both ways.
func (s *Spec) checkDirections() error {
	if s.Bidir && s.Reverse {
		return fmt.Errorf("bidir and reverse: give one (bidir already sends both ways; reverse sends from the receivers only)")
	}
	return nil
}

// roleIn is what host name does in a run of pairs: RoleSender when it
// only sends, RoleReceiver when it only receives, RoleBoth when it does
// both ("": neither).
func roleIn(pairs []Pair, name string) gossip.Role {
	sends := slices.ContainsFunc(pairs, func(p Pair) bool { return p.Sender == name })
	receives := slices.ContainsFunc(pairs, func(p Pair) bool { return p.Receiver == name })
	switch {
	case sends && receives:
		return gossip.RoleBoth
	case sends:
		return gossip.RoleSender
	case receives:
		return gossip.RoleReceiver
	}
	return ""
}

// cannotBe says why a member announcing role cannot do what the run
// asks of it (want), naming the flag that asks it ("" when it can).
func cannotBe(role, want gossip.Role, spec *Spec) string {
	if (!want.Sends() || role.Sends()) && (!want.Receives() || role.Receives()) {
		return ""
	}
	switch {
	case spec.Bidir:
		return fmt.Sprintf("runs as %s, cannot be both a sender and a receiver, as --bidir makes every host: start its agent with --role both", role)
	case spec.Reverse && want.Sends():
		return fmt.Sprintf("runs as %s, cannot be a sender, as --reverse makes every named receiver: start its agent with --role sender or both", role)
	case spec.Reverse:
		return fmt.Sprintf("runs as %s, cannot be a receiver, as --reverse makes every named sender: start its agent with --role receiver or both", role)
	}
	return fmt.Sprintf("runs as %s, cannot be a %s", role, want)
}

// DirectionTotal is one direction's flows of a run taken together
// (`"directions"` of a run that turns flows round): the hosts that sent
// and received that way, and the sums of its flows' books.
type DirectionTotal struct {
	Direction Direction `json:"direction"`
	Senders   []string  `json:"senders"`   // the hosts that sent this way, in flow order
	Receivers []string  `json:"receivers"` // the hosts that received this way
	Flows     int       `json:"flows"`
	// Sent, Received and Lost are the flows' sums; LossRatio is Lost of
	// Sent, the direction's own loss.
	Sent      uint64  `json:"sent"`
	Received  uint64  `json:"received"`
	Lost      uint64  `json:"lost"`
	LossRatio float64 `json:"loss_ratio"`
	// Refused are the frames its senders' kernels refused and the senders
	// sent again (Flow.Refused): pushback, never lost.
	Refused uint64 `json:"refused"`
	// Lost attributed as each flow attributed it (Reconcile), the
	// network's first: what a path's own drops of the direction
	// (PathTruth.Directions) are set against.
	LostNetwork      uint64 `json:"lost_network"`
	LostSenderHost   uint64 `json:"lost_sender_host"`
	LostReceiverHost uint64 `json:"lost_receiver_host"`
	Uncounted        uint64 `json:"uncounted,omitempty"`
	// PPS and L1BPS are the flows' rates summed: the direction's rate.
	PPS   float64 `json:"pps"`
	L1BPS float64 `json:"l1_bps"`
}

// directionTotals sums flows per direction, forward first, each with the
// hosts that sent and received that way in flow order (nil when no flow
// has a direction: the run went one way).
func directionTotals(flows []Flow) []DirectionTotal {
	var out []DirectionTotal
	for _, d := range []Direction{Forward, Reverse} {
		t := DirectionTotal{Direction: d, Senders: []string{}, Receivers: []string{}}
		for _, f := range flows {
			if f.Direction != d {
				continue
			}
			if !slices.Contains(t.Senders, f.Sender) {
				t.Senders = append(t.Senders, f.Sender)
			}
			if !slices.Contains(t.Receivers, f.Receiver) {
				t.Receivers = append(t.Receivers, f.Receiver)
			}
			t.Flows++
			t.Sent, t.Received, t.Lost, t.Refused = t.Sent+f.Sent, t.Received+f.Received, t.Lost+f.Lost, t.Refused+f.Refused
			t.LostSenderHost, t.LostNetwork, t.LostReceiverHost = t.LostSenderHost+f.LostSenderHost, t.LostNetwork+f.LostNetwork, t.LostReceiverHost+f.LostReceiverHost
			t.Uncounted, t.PPS, t.L1BPS = t.Uncounted+f.Uncounted, t.PPS+f.PPS, t.L1BPS+f.L1BPS
		}
		if t.Flows == 0 {
			continue
		}
		if t.Sent > 0 {
			t.LossRatio = float64(t.Lost) / float64(t.Sent)
		}
		out = append(out, t)
	}
	return out
}
