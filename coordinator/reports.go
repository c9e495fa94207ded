package coordinator

// senderReport is a sender's account of its part in a run, as the agent
// reported it at the end (convert.go reads it from the proto summary).
type senderReport struct {
	Packets, Errors uint64
	TxDropped       uint64 // the host's interface tx drops during the send
	PPS             float64
	WindowSec       float64 // first to last packet, seconds
	Backend         string
	Warnings        []string
	Threads         []senderThread
}

// senderThread is one sender thread's count: the sending end of one
// stream.
type senderThread struct {
	Src             string
	Packets, Errors uint64
	PPS             float64
	FirstFrameNs    uint64 // when its first frame went (0: unknown)
}

// receiverReport is a receiver's account of a run: its per-stream counts
// (Sent unknown) and what its host dropped before counting.
type receiverReport struct {
	Method       string
	XDPMode      string // receiver.XDPNative or XDPGeneric for xdp
	Packets      uint64 // every frame counted, test packets or not
	OtherPackets uint64 // frames without the pktgen header (ARP, ND, …)
	// HostDrops are the receiving host's drops before the receiver
	// counted: ring drops, rx_dropped, rx_missed, rx_fifo.
	HostDrops uint64
	// Overflow are test packets of streams beyond the receiver's stream
	// table: they arrived, but in no stream's count.
	Overflow uint64
	Streams  []Stream
}
