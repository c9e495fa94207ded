package coordinator

import (
	"github.com/linerate/linerate/latency"
	"github.com/linerate/linerate/pktgen"
	recv "github.com/linerate/linerate/receiver"
)

// Stream is one sequence stream of a flow (one sender thread) as both
// ends saw it: the receiver's account (receiver.StreamReport, as its
// agent reported it) and what only the sending end and the balance know.
// Its JSON is a flow's stream_detail, in the order documents have always
// had (streamjson.go).
type Stream struct {
	recv.StreamReport
	Sent uint64 `json:"sent"` // the sender backend's count for this stream
	Lost uint64 `json:"lost"` // sent − distinct received: head and tail loss included; Reconcile fills it
	// FirstFrameNs is when the stream's first frame went, Unix ns on its
	// sender's clock (absent: unknown); with the receiver's
	// FirstArrivalNs, on its own clock, Result.StartSpread is made of
	// them.
	FirstFrameNs uint64 `json:"first_frame_ns,omitempty"`
}

// lost is sent − distinct received: head and tail loss included, which
// sequence gaps alone miss. Late packets are not distinct: the window
// could not tell them from duplicates (a warning says how many).
//
// In a run whose senders send bursts (burst > 1) the receiver's
// duplicates are not subtracted: kernel pktgen numbers every packet it
// sends and ends a burst early when the device's queue stops, so the
// next frame's sequence then falls in the step of the one cut short, and
// the receiver (counting in steps of the copies) takes its copies for
// more of that one. Every copy that arrived is one pktgen sent, so the
// books count them all; true duplication is then in the duplicates only.
func (s Stream) lost(burst int) uint64 {
	notDistinct := s.Duplicates + s.Late
	if burst > 1 {
		notDistinct = s.Late
	}
	distinct := s.Received - min(notDistinct, s.Received)
	return s.Sent - min(distinct, s.Sent)
}

// FlowInput is everything known about one sender → receiver flow.
type FlowInput struct {
	Sender, Receiver string
	Direction        Direction // "" in a run that goes one way only
	// Streams are the flow's streams with both ends' counts (their Lost
	// is ignored: Reconcile works it out).
	Streams []Stream
	// Refused counts the times the sending host's kernel refused a frame
	// that the backend then sent again with the same sequence number (its
	// errors, as pktgen counts them: a full queue, a veth peer's full
	// backlog, a full send buffer): pushback, neither in Sent twice nor
	// lost.
	Refused uint64
	// SenderHostDrops counts drops on the sending host after the backend
	// counted the packet (interface tx_dropped, driver xmit errors).
	SenderHostDrops uint64
	// ReceiverHostDrops counts drops on the receiving host before the
	// receiver counted (rx_missed, rx_dropped, ring drops). Never network loss.
	ReceiverHostDrops uint64
	// Uncounted is how many of the flow's packets the receiver saw but
	// could not count (streams beyond its table): never loss of any kind.
	Uncounted uint64
	// Burst is kernel pktgen's burst in the run (0 or 1: none): with
	// bursts, duplicates are counted as received (Stream.lost).
	Burst         int
	DurationSec   float64 // the send window
	FrameBytes    float64 // mean frame size without FCS
	LinkSpeedMbps float64 // the slower of the two links; 0 when unknown
	OfferedPPS    float64 // requested rate for the flow; 0 = as fast as possible
	AchievedPPS   float64 // what the senders reached
}

// Flow is the reconciled result (the `flows` entries of `linerate run --json`).
type Flow struct {
	Sender   string `json:"sender"`
	Receiver string `json:"receiver"`

	// Direction is which way the flow goes in a run that turns flows
	// round (--bidir, --reverse): forward from a named sender, reverse
	// from a named receiver (absent in a run that goes one way).
	Direction Direction `json:"direction,omitempty"`

	Streams    int     `json:"streams"`
	Sent       uint64  `json:"sent"`
	Received   uint64  `json:"received"`
	Lost       uint64  `json:"lost"`
	Duplicates uint64  `json:"duplicates"`
	Reordered  uint64  `json:"reordered"`
	LossRatio  float64 `json:"loss_ratio"`
	// Refused are the frames the sender's kernel refused and its backend
	// sent again (FlowInput.Refused): pushback, not loss.
	Refused          uint64 `json:"refused"`
	LostSenderHost   uint64 `json:"lost_sender_host"`
	LostNetwork      uint64 `json:"lost_network"`
	LostReceiverHost uint64 `json:"lost_receiver_host"`
	// Uncounted is the part of Lost that reached the receiver but that it
	// could not count (streams beyond its stream table): the receiver
	// host's, never the network's (absent when 0).
	Uncounted        uint64  `json:"uncounted,omitempty"`
	PPS              float64 `json:"pps"`
	L2BPS            float64 `json:"l2_bps"`
	L1BPS            float64 `json:"l1_bps"`
	LineRatePct      float64 `json:"line_rate_pct"`
	GeneratorLimited bool    `json:"generator_limited"`
	OfferedPPS       float64 `json:"offered_pps,omitempty"` // requested; 0 = as fast as possible
	AchievedPPS      float64 `json:"achieved_pps"`          // what the senders sent per second
	// DurationSec is the send window the rates are over (the sender's
	// time from first to last packet).
	DurationSec float64 `json:"duration_s,omitempty"`
	// Latency is the delays of every packet of the flow's streams, on the
	// clock it states (absent when the receiver timed none).
	Latency *latency.Latency `json:"latency,omitempty"`
	// RTT is the flow's round trips (latency rtt only).
	RTT *RTT `json:"rtt,omitempty"`
	// StreamDetail is every stream of the flow as both ends saw it.
	StreamDetail []Stream `json:"stream_detail,omitempty"`
}

// Window is the flow's send window in seconds: DurationSec, or for a
// flow recorded before flows carried it, distinct received / PPS (0 when
// neither is known).
func (f Flow) Window() float64 {
	if f.DurationSec > 0 || f.PPS <= 0 {
		return f.DurationSec
	}
	return float64(f.Received-min(f.Duplicates, f.Received)) / f.PPS
}

// generatorTolerance is the fraction of the offered rate at which senders
// count as having reached it: within 1 %.
const generatorTolerance = 0.99

// Reconcile balances one flow. Lost is sent minus the distinct packets
// received (received − duplicates), per stream, so head and tail loss
// count as well as gaps; a stream cannot make up for another's loss.
// Loss is attributed in order: packets the receiver saw but could not
// count (Uncounted: they arrived), dropped in the sender host, dropped in
// the receiver host, and the rest in the network — neither a receiver
// host's drops nor what it could not count are ever reported as network
// loss. The flow's StreamDetail are its streams with their loss.
func Reconcile(in FlowInput) Flow {
	f := Flow{Sender: in.Sender, Receiver: in.Receiver, Direction: in.Direction, Streams: len(in.Streams), Refused: in.Refused, DurationSec: in.DurationSec}
	for _, s := range in.Streams {
		s.Lost = s.lost(in.Burst)
		f.Sent += s.Sent
		f.Received += s.Received
		f.Duplicates += s.Duplicates
		f.Reordered += s.Reordered
		f.Lost += s.Lost
		f.StreamDetail = append(f.StreamDetail, s)
		if s.Latency != nil {
			f.Latency = latency.Merge(f.Latency, s.Latency)
		}
	}
	if f.Sent > 0 {
		f.LossRatio = float64(f.Lost) / float64(f.Sent)
	}
	rest := f.Lost
	f.Uncounted = min(rest, in.Uncounted)
	rest -= f.Uncounted
	f.LostSenderHost = min(rest, in.SenderHostDrops)
	rest -= f.LostSenderHost
	f.LostReceiverHost = min(rest, in.ReceiverHostDrops)
	rest -= f.LostReceiverHost
	f.LostNetwork = rest
	if in.DurationSec > 0 {
		distinct := f.Received - min(f.Duplicates, f.Received)
		if in.Burst > 1 {
			distinct = f.Received
		}
		f.PPS = float64(distinct) / in.DurationSec
	}
	f.L2BPS = pktgen.L2Bits(f.PPS, in.FrameBytes)
	f.L1BPS = pktgen.L1Bits(f.PPS, in.FrameBytes)
	if in.LinkSpeedMbps > 0 {
		f.LineRatePct = 100 * f.L1BPS / (in.LinkSpeedMbps * 1e6)
	}
	f.GeneratorLimited = in.OfferedPPS > 0 && in.AchievedPPS < generatorTolerance*in.OfferedPPS
	f.OfferedPPS, f.AchievedPPS = in.OfferedPPS, in.AchievedPPS
	return f
}
