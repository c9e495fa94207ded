// Package receiver counts the test traffic that arrives on one
// interface, per stream, exactly: every packet whose UDP payload starts
// with the pktgen header (pktgen.Header: magic, sequence, timestamp).
//
// # Streams and sequences
//
// A stream is (source address, destination address, UDP destination
// port); IPv4 and IPv6, untagged or with up to two 802.1Q/802.1ad tags,
// IPv4 with options. Sequences start at 1, as pktgen and linerate's
// generators number them. Per stream the receiver reports received, the
// highest sequence (max_seq, unwrapped past pktgen's 32 bits: a tail loss
// shows as max_seq below what was sent), duplicates, reordered (first
// copies that arrived after a higher sequence of the same stream), late
// (see below), missing (sequences in [1, max_seq] never seen, head loss
// included), the first Options.MaxRanges missing ranges and the first
// arrival (first_arrival_ns, the receiver's realtime clock). Frames without the header — ARP, IPv6 ND, IPv4 fragments after
// the first, anything else — are counted apart (Report.OtherPackets) and
// never enter a stream.
//
// # The window
//
// Memory does not grow with the run: each stream keeps a sliding window
// of its newest sequences (Options.Window, a power of two, default 2^21),
// one bit each in Window/32 64-bit words, each word tagged with which 32
// sequences it holds (seqwindow.go): 512 KiB per stream by default,
// whatever the run's length — at 14.88 Mpps one stream passes 2^26
// sequences in 4.5 s, and a 10-minute 10 GbE run is about 9·10^9 frames.
// A packet's word either holds its sequence (a duplicate if the bit is
// set), or holds an older word, which it replaces (those sequences are
// final: seen or missing), or holds a newer one: the packet is late, its
// sequence left the window, and it is counted in late and nothing else —
// it is either a duplicate or the late first copy of a sequence already
// counted missing, and the window cannot tell which. Counts are exact for
// the whole run without any scan: missing = max_seq - first copies. The
// wire carries 32 bits; the window unwraps them to 64 (every lap of a
// sequence maps to the same word) by taking the lap nearest the stream's
// head: a word index shared by every CPU and ring that counts the
// stream, moved up whenever a recorded word is more than 2^16 words past
// it (so written about once per 2^21 sequences, read by all). A stream
// past 2^32 sequences counts on instead of taking its second lap for
// duplicates, and so does a CPU or ring that first sees the stream after
// 2^32 of its sequences (an RSS or IRQ move mid-run) — unwrapped against
// its own highest sequence it would have counted every packet late. The
// tags are 32 bits: a slot that holds a word 2^31 words old (a loss of
// 2^36 sequences, 2^32 with Repeats > 1, in one burst) would take newer
// words for older.
//
// Missing ranges are listed complete, from sequence 1. When a word is
// evicted the sequences it saw are recorded, as runs, in a sorted list
// per stream; a word that never reached its slot — a loss longer than
// the window — is simply never seen. At Stop the gaps between those
// runs, then the window's own last Window sequences, are the ranges: the
// first Options.MaxRanges of them. The list holds MaxRanges + 65 runs
// (16 bytes each, as many as the stream's loss makes); when a stream has
// more, the highest are dropped and the ranges below them are still
// exact, so the report still lists its first MaxRanges (fewer only when,
// after that, later words joined most of the runs it kept). AF_PACKET
// records in Go (full words in order extend the last run with a
// compare-and-swap; others take the stream's lock). The XDP program
// extends a run of full words per CPU and slot in a per-CPU map (no
// atomic) and sends the rest — a word with loss, a run that broke — to Go
// through a ring buffer (8 MiB, waking nobody: Go polls it every 10 ms),
// which Go records the same way. If the ring had no room for a record
// (Go more than half a second behind at line rate), the XDP ranges are
// listed from the words the window still holds (the last Window
// sequences up to max_seq), and StreamReport.MissingRangesFrom says from
// where (missing counts all).
// Packets with sequence 0 are counted in received and beyond_capacity
// only. With Options.Repeats > 1 (pktgen's clone_skb times its burst:
// the same sequence sent several times on purpose) each sequence has a
// 16-bit copy counter instead, two per word (default window 2^17, 512 KiB
// per stream), and only copies beyond Repeats are duplicates;
// Options.SeqStride counts pktgen's numbering of such frames in steps.
// A round trip's latency stream (a port in Options.Reflect) is sent once
// per sequence beside such a load, and is counted so: stride 1, a second
// copy a duplicate, in the same window layout (the XDP program looks its
// port up before it counts, and reflects by that answer).
//
// Memory figures (Options.SeqStateBytes, which an agent's budget checks;
// the coordinator sizes the window from the plan, at least 100 ms of the
// busiest stream): a 10-minute 10 GbE 64-byte line-rate run on 64 queues,
// 64 streams into one receiver with a table of 80, takes 80 × 16 KiB =
// 1.25 MiB; one stream at that line rate a table of 17 × 512 KiB = 8.5
// MiB; 1,100 streams (a table of 1,375) 21.5 MiB at 2,000 pps each, 687.5
// MiB at the default window.
//
// # Methods
//
// XDP (Options.Method "xdp", first choice of "auto"): a program written
// with cilium/ebpf's asm package at run time (no clang) parses each frame
// in the kernel and counts it. The stream's slot comes from a small
// per-CPU cache of the streams the CPU saw last (8 entries, direct-mapped
// by a hash of the key, compared on the whole key), else from a hash map
// (new slots from an atomic counter, inserted with BPF_NOEXIST). The
// per-slot counters are per CPU, plain adds, summed by Go (MaxStreams × 72
// bytes per CPU; the runs of full words MaxStreams × 16 bytes per CPU),
// the streams' heads an array shared by all CPUs (MaxStreams × 8 bytes). The windows are one BPF_F_MMAPABLE array shared by all
// CPUs, updated with an atomic compare-and-swap of the whole word — the
// one atomic per packet of a known stream — so duplicates and missing are
// exact however the packets spread over CPUs. A try loses only when
// another CPU changed the same word (the same stream, sequences within 32
// of each other) between this CPU's load and its compare-and-swap, a few
// instructions; the loop is unrolled to 8 tries, and a packet that loses
// all 8 is counted in unrecorded (in received, nowhere else; missing may
// then count its sequence), never dropped silently. With one RX queue per
// stream it cannot happen; a stream spread over queues needs 8 losses in a
// row. max_seq is the highest of the CPUs'; the first arrival is
// bpf_ktime_get_ns at each CPU's first packet of the stream, the earliest,
// turned into realtime with CLOCK_REALTIME - CLOCK_MONOTONIC read at
// collection. Reordered is counted per CPU, as the AF_PACKET method counts
// it per ring: a first copy that arrived after a higher sequence of the
// same stream on the same CPU (RX queue). With one RX queue per stream —
// a veth, or a NIC whose RSS hashes the stream to one queue — that is
// every reordered packet; packets of one stream that RSS spreads over
// queues (a range of UDP source ports) have no order between queues.
// The program also counts each stream's packets per receive queue (the
// frame's rx_queue_index; per CPU, SpreadQueues u64 per stream, queues from
// SpreadQueues-1 up together), which the final report gives as
// StreamReport.Queues: the RSS spread, how the streams fell on the queues.
// The array is allocated up front: MaxStreams × Window/4 bytes (512 KiB
// per stream by default). Test packets are dropped after counting
// (XDP_DROP: the receiver is a sink) unless Options.Pass; other packets
// always pass. The program attaches in native (driver) mode where the
// driver has it, else generic (SKB) mode, and Report.MethodReason says
// which. A new stream first seen on two CPUs at the same instant may use
// up two of the MaxStreams slots (one stays empty). Needs Linux 5.12
// (atomic compare-and-swap), CAP_BPF and CAP_NET_ADMIN. Measured here:
// docs/benchmarks.md (BenchmarkXDPProgram).
//
// AF_PACKET ("afpacket", or "auto" when XDP cannot attach): one
// TPACKET_V3 ring per CPU in a PACKET_FANOUT_CPU group, each read by a
// goroutine pinned to its CPU into its own fork of one Table (Table.Fork:
// the same Go accounting core; per-ring counters, one window per stream
// shared by all rings and updated with the same compare-and-swap, so a
// sequence seen by two rings is a duplicate, exactly; 10 to 13 ns per
// packet here, 15 to 17 with repeats, BenchmarkAdd). Stop sums the counters; reordered is
// counted per ring (packets of a stream that arrive on different CPUs
// have no order between them); it cannot tell a frame's receive queue, so
// its streams have no Queues. The first arrival is the earliest ring's
// kernel timestamp of the stream's first frame (tp_sec, tp_nsec). It only taps: packets continue to the
// stack. The rings' drops (PACKET_STATISTICS) are Report.RingDrops.
// Needs CAP_NET_RAW.
//
// AF_XDP ("afxdp", only when asked for: auto never picks it, since it
// needs an XDP program as the xdp method does and copies every test frame
// to Go where that counts it in place): one AF_XDP socket per receive
// queue (internal/xsk; zero-copy where the driver binds it, else copy),
// each read by a goroutine locked to its queue's CPU (Options.CPUs, else
// the process's CPUs in order) into its own fork of one Table, as the
// AF_PACKET rings are; an XDP program (the xdp method's parse, then
// bpf_redirect_map by rx_queue_index into an XSKMAP) sends each test frame
// to its queue's socket, stamped with its arrival in the frame's XDP
// metadata, and passes every other frame to the stack (counted in
// OtherPackets). need_wakeup follows Options.NeedWakeup (auto: on for a
// physical NIC, off for a virtual device, xsk.Virtual); the reader calls
// poll() only when the fill ring asks, or when its ring is empty. The
// sockets' rings share 64 MiB of UMEM (afxdpRing). Their drops
// (XDP_STATISTICS rx_dropped and rx_ring_full) are Report.RingDrops, taken
// out of the link's rx_dropped, where the driver counts its failed
// redirects too. Each stream's Queues are its packets per socket. Needs
// CAP_NET_RAW, CAP_BPF and CAP_NET_ADMIN.
//
// # Latency
//
// With Options.Latency oneway (the default) every test packet is timed:
// its arrival less the send time its header carries (tv_sec, tv_usec:
// microseconds), into the stream's latency.Histogram (StreamReport.Latency:
// min, percentiles, max, mean, RFC 3550 jitter, RFC 5481 PDV; see package
// latency for the layout and its error), so its samples equal Received.
// Every copy counts, and copies sent on purpose (Repeats > 1) share their
// first copy's send time. A delay below 0 (the sender's clock is ahead)
// or of 16.8 s or more (a clock step, or no stamp) is counted apart.
// Options.ClockCorrections adds, per UDP destination port, the difference
// of the sender's clock and this host's (a run measures it); Options.Clock
// states what the delays are on (the receiver knows only its own clock).
//
// The XDP method times arrivals in the program: bpf_ktime_get_tai_ns less
// the kernel's TAI offset where the kernel has it (6.1+), else
// bpf_ktime_get_ns plus realtime less monotonic, which Go writes every
// 100 ms; each CPU fills its own histogram of the stream (5 KiB per stream
// per CPU, allocated up front), summed by Go. Jitter is per CPU (per RX
// queue), their weighted mean when a stream spreads. The AF_PACKET method
// takes each frame's ring timestamp (the kernel's receive time on the
// realtime clock). The clock read per packet is the cost: on this
// machine's kvm-clock about 30 ns in the XDP program (docs/benchmarks.md).
//
// # Interface counters
//
// Start reads the interface's counters (netlink stats64: rx_packets,
// rx_dropped, rx_missed_errors, rx_fifo_errors; and the driver's ethtool
// statistics, from which XDP packets and drops are summed) and Stop
// reports the difference. On a veth, the frames an XDP program saw are
// the driver's rx_queue_N_xdp_packets: compare the receiver's packets
// with Link.XDPPackets there; on NICs whose XDP counts nothing apart,
// with Link.RxPackets.
//
// # Lifecycle
//
// Start must run in the interface's network namespace; every socket and
// link it opens stays bound to it, so Snapshot, Stop and Close work from
// anywhere. Stop always detaches; Close does the same for error paths;
// cancelling Start's context detaches too. A process that dies loses its
// XDP link and sockets with its file descriptors, so nothing outlives it.
// Count is the whole of a receiver's life for a command (`linerate
// recv`): Start, count until the context ends, a duration passes or the
// traffic has been idle, Stop. Options are validated in one place, and
// errors name them as Options.Names says (a command's flags).
package receiver
