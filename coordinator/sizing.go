package coordinator

import (
	"fmt"
	"math/bits"
	"time"

	"github.com/linerate/linerate/pktgen"
	recv "github.com/linerate/linerate/receiver"
)

// Receiver sizing: the coordinator knows every stream each receiver will
// see (every sender thread sending to it is one stream) and how many
// sequences each carries, so it arms every receiver with a stream table
// and a per-stream sequence capacity that fit the plan, and refuses a plan
// whose sequence state is over the receiver's memory budget before any
// agent is leased.
const (
	// maxReceiverStreams is the largest stream table a receiver takes.
	maxReceiverStreams = recv.MaxStreamsLimit
	// defaultSeqCapacity is the receiver's own default, used when nothing
	// bounds a stream: an unpaced run over links of unknown speed.
	defaultSeqCapacity = recv.DefaultSeqCapacity
	// minSeqCapacity and maxSeqCapacity bound a sized capacity: a small
	// run still gets a few KiB, and sequences are 32-bit.
	minSeqCapacity = 1 << 12
	maxSeqCapacity = recv.MaxSeqCapacity
	// seqSlack is added to every capacity found from a rate: a paced
	// sender's catch-up and stop are not to the packet.
	seqSlack = 1024
)

// streamMargin is how many spare slots a receiver's stream table gets
// beyond the streams planned: a quarter, at least 16. The XDP method may
// use two slots for a stream first seen on two CPUs at the same instant,
// and a stray stream (another run's late frames) must not push a planned
// one out of the table.
func streamMargin(streams int) int { return max(16, streams/4) }

// receiverSize is how one receiver is armed for a run.
type receiverSize struct {
	Streams     int    // streams planned: the sender threads sending to it
	MaxStreams  int    // its stream table: Streams + streamMargin
	SeqCapacity uint64 // the highest sequence tracked per stream
	// From says what SeqCapacity was found from: "count", "rate",
	// "line rate" or "default" (unpaced over links of unknown speed).
	From string
}

// Bytes is the sequence state the receiver allocates for z, by the
// receiver's own formula (receiver.Options.SeqStateBytes: one bit per
// sequence in [0, SeqCapacity] per slot of the table; the XDP method
// allocates all of it up front, AF_PACKET as sequences arrive).
func (z receiverSize) Bytes() uint64 {
	b, err := recv.Options{MaxStreams: z.MaxStreams, SeqCapacity: z.SeqCapacity}.SeqStateBytes()
	if err != nil { // out of the receiver's range: check refuses it first
		return 0
	}
	return b
}

// streamLoad is what sizing needs of one flow's sender: how many threads
// (streams) send the flow and the speed of the slower of its two links.
type streamLoad struct {
	Threads       int
	LinkSpeedMbps int64 // 0: unknown
}

// loadsTo are the flows of pairs sent to receiver, each with what of its
// sender of returns: its threads per flow and the slower link's speed.
func loadsTo(pairs []Pair, receiver string, of func(sender string) (threads int, linkMbps int64)) []streamLoad {
	var out []streamLoad
	for _, p := range pairs {
		if p.Receiver == receiver {
			threads, link := of(p.Sender)
			out = append(out, streamLoad{Threads: threads, LinkSpeedMbps: link})
		}
	}
	return out
}

// sizeReceiver sizes a receiver for the flows sent to it: one stream per
// sending thread, and the capacity of the busiest stream — from the
// spec's count when it has one (split over the flow's threads, the
// remainder to the first), else from its rate over the duration, else
// (unpaced) from the line rate of the flow's slower link at the mean
// frame over the duration, a thread's share at most twice its even
// share of the link, each with 1/16 and seqSlack to spare.
func sizeReceiver(spec Spec, flows []streamLoad) receiverSize {
	var z receiverSize
	for _, f := range flows {
		threads := max(f.Threads, 1)
		z.Streams += threads
		c, from := streamCapacity(spec, threads, f.LinkSpeedMbps)
		if c > z.SeqCapacity || z.From == "" {
			z.SeqCapacity, z.From = max(c, z.SeqCapacity), from
		}
	}
	z.MaxStreams = min(z.Streams+streamMargin(z.Streams), maxReceiverStreams)
	z.SeqCapacity = min(max(z.SeqCapacity, minSeqCapacity), maxSeqCapacity)
	return z
}

// streamCapacity is the sequences one of threads streams of a flow
// carries (see sizeReceiver) and what it was found from.
func streamCapacity(spec Spec, threads int, linkMbps int64) (uint64, string) {
	n := uint64(threads)
	switch {
	case spec.Count > 0:
		return pktgen.SplitCount(spec.Count, threads)[0], "count" // the first thread's share is the largest
	case spec.Rate > 0:
		return withSlack(float64(pktgen.SplitRate(spec.Rate, threads)[0]), spec.Duration), "rate"
	case linkMbps > 0:
		line := MaxPPS(float64(linkMbps), spec.MeanFrame())
		return withSlack(min(line, 2*line/float64(n)), spec.Duration), "line rate"
	}
	return defaultSeqCapacity, "default"
}

// withSlack is pps over d with 1/16 and seqSlack to spare, capped at
// maxSeqCapacity.
func withSlack(pps float64, d time.Duration) uint64 {
	seqs := pps * d.Seconds() * 17 / 16
	if seqs >= maxSeqCapacity {
		return maxSeqCapacity
	}
	return min(uint64(seqs)+seqSlack, maxSeqCapacity)
}

// check refuses z over budget bytes of sequence state (0: the agent
// announced none), naming the numbers and what would help.
func (z receiverSize) check(budget uint64) error {
	if z.Streams > maxReceiverStreams {
		return fmt.Errorf("%d streams planned: a receiver counts at most %d: fewer threads or senders per receiver", z.Streams, maxReceiverStreams)
	}
	if budget == 0 || z.Bytes() <= budget {
		return nil
	}
	return fmt.Errorf("%d streams (a table of %d) × %s sequences need %s of sequence state, its receiver budget is %s: shorten the run, lower the rate or raise --receiver-memory",
		z.Streams, z.MaxStreams, seqCount(z.SeqCapacity), mebibytes(z.Bytes()), mebibytes(budget))
}

// seqCount is n as "2^k" when it is a power of two, else in decimal.
func seqCount(n uint64) string {
	if n > 0 && n&(n-1) == 0 {
		return fmt.Sprintf("2^%d", bits.TrailingZeros64(n))
	}
	return fmt.Sprint(n)
}

// mebibytes is n bytes in MiB, rounded up ("272 MiB").
func mebibytes(n uint64) string { return fmt.Sprintf("%d MiB", (n+1<<20-1)>>20) }
