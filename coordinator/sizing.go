package coordinator

import (
	"fmt"
	"math/bits"
	"time"

	"github.com/linerate/linerate/pktgen"
	recv "github.com/linerate/linerate/receiver"
)

// Receiver sizing: the coordinator knows every stream each receiver will
// see (every sender thread sending to it is one stream) and how fast each
// is sent, so it arms every receiver with a stream table and a sequence
// window per stream that fit the plan, and refuses a plan whose windows
// are over the receiver's memory budget before any agent is leased. The
// windows' memory does not depend on the run's length.
const (
	// maxReceiverStreams is the largest stream table a receiver takes.
	maxReceiverStreams = recv.MaxStreamsLimit
	// defaultWindow is the receiver's own default, used when nothing
	// bounds a stream: an unpaced run over links of unknown speed.
	defaultWindow = recv.DefaultWindow
	// minWindow and maxWindow bound a sized window: 2^16 sequences
	// (16 KiB a stream) holds any paced lab run's reordering, and the
	// receiver's own limit.
	minWindow = 1 << 16
	maxWindow = recv.MaxWindow
	// windowSpan is the time of a stream's traffic its window holds at
	// least: a packet later than that behind its stream is counted late.
	windowSpan = 100 * time.Millisecond
)

// streamMargin is how many spare slots a receiver's stream table gets
// beyond the streams planned: a quarter, at least 16. The XDP method may
// use two slots for a stream first seen on two CPUs at the same instant,
// and a stray stream (another run's late frames) must not push a planned
// one out of the table.
func streamMargin(streams int) int { return max(16, streams/4) }

// receiverSize is how one receiver is armed for a run.
type receiverSize struct {
	Streams    int    // streams planned: the sender threads sending to it
	MaxStreams int    // its stream table: Streams + streamMargin
	Window     uint64 // sequences per stream its window holds
	// From says what Window was found from: "count" (the whole stream
	// fits), "rate", "line rate" or "default" (unpaced over links of
	// unknown speed).
	From string
	// Repeats is the copies of each sequence the senders send (Spec.Copies).
	Repeats int
}

// Bytes is the sequence state the receiver allocates for z, by the
// receiver's own formula (receiver.Options.SeqStateBytes: Window/32
// words per slot of the table; the XDP method allocates all of it up
// front, AF_PACKET per stream as streams appear).
func (z receiverSize) Bytes() uint64 {
	b, err := recv.Options{MaxStreams: z.MaxStreams, Window: z.Window, Repeats: max(z.Repeats, 1)}.SeqStateBytes()
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
// sending thread, and a window for the busiest stream of at least
// windowSpan of its packets — its rate's share (the flow's rate split over
// its threads), else (unpaced) the line rate of the flow's slower link at
// the mean frame, a thread's share at most twice its even share of the
// link — or its whole count when that is less; with 1/16 to spare,
// rounded up to a power of two, minWindow to maxWindow.
func sizeReceiver(spec Spec, flows []streamLoad) receiverSize {
	z := receiverSize{Repeats: spec.Copies()}
	for _, f := range flows {
		threads := max(f.Threads, 1)
		z.Streams += threads
		w, from := streamWindow(spec, threads, f.LinkSpeedMbps)
		if w > z.Window || z.From == "" {
			z.Window, z.From = max(w, z.Window), from
		}
	}
	if spec.Latency == LatencyRTT {
		z.Streams += len(flows) // each flow's latency stream
	}
	z.MaxStreams = min(z.Streams+streamMargin(z.Streams), maxReceiverStreams)
	// Copies count in steps of their number (SeqStride): fewer bits of
	// sequence, a narrower window the receiver can place.
	z.Window = min(z.Window, recv.StrideWindow(z.Repeats, z.Repeats))
	return z
}

// streamWindow is the window one of threads streams of a flow needs (see
// sizeReceiver) and what it was found from.
func streamWindow(spec Spec, threads int, linkMbps int64) (uint64, string) {
	var pps float64
	from := "default"
	switch {
	case spec.Rate > 0:
		pps, from = float64(pktgen.SplitRate(spec.Rate, threads)[0]), "rate"
	case linkMbps > 0:
		line := pktgen.LinePPS(float64(linkMbps), spec.MeanFrame())
		pps, from = min(line, 2*line/float64(threads)), "line rate"
	}
	need := pps * windowSpan.Seconds()
	if spec.Count > 0 {
		if c := float64(pktgen.SplitCount(spec.Count, threads)[0]); pps == 0 || c < need { // the first thread's share is the largest
			need, from = c, "count"
		}
	}
	need /= float64(spec.Copies()) // the window holds sequences, each sent Copies times
	if need == 0 {
		return defaultWindow, from
	}
	return powerOfTwo(need * 17 / 16), from
}

// powerOfTwo is the least power of two at least n, minWindow to maxWindow.
func powerOfTwo(n float64) uint64 {
	if n >= maxWindow {
		return maxWindow
	}
	w := uint64(minWindow)
	for float64(w) < n {
		w <<= 1
	}
	return w
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
	return fmt.Errorf("%d streams (a table of %d) × a window of %s sequences need %s of sequence state, its receiver budget is %s: fewer streams per receiver, a lower rate or raise --receiver-memory",
		z.Streams, z.MaxStreams, seqCount(z.Window), mebibytes(z.Bytes()), mebibytes(budget))
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
