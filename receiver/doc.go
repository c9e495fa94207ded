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
// highest sequence (max_seq: a tail loss shows as max_seq below what was
// sent), duplicates, reordered (first copies that arrived after a higher
// sequence of the same stream), missing (sequences in [1, max_seq] never
// seen, head loss included) and the first Options.MaxRanges missing
// ranges. Frames without the header — ARP, IPv6 ND, IPv4 fragments after
// the first, anything else — are counted apart (Report.OtherPackets) and
// never enter a stream.
//
// Accounting is exact for the whole run: each stream keeps one bit per
// sequence (sequence s is bit s%64 of word s/64), so 1 M packets of a
// stream take 128 KiB. Options.SeqCapacity bounds it (default 2^26
// sequences, 8 MiB per stream); packets with a higher sequence, or
// sequence 0, are counted in received and in the stream's
// beyond_capacity and in nothing else (said in the JSON when not 0). With
// Options.Repeats > 1 (pktgen clone_skb+1 or burst: the same sequence
// sent several times on purpose) each sequence has a 16-bit copy counter
// instead (16 bits per sequence) and only copies beyond Repeats are
// duplicates. Sequences are pktgen's 32 bits: a stream that wraps
// (4.29 G packets) counts its second lap as duplicates.
//
// # Methods
//
// XDP (Options.Method "xdp", first choice of "auto"): a program written
// with cilium/ebpf's asm package at run time (no clang) parses each frame
// in the kernel and counts it. The stream's slot comes from a small
// per-CPU cache of the streams the CPU saw last (8 entries, direct-mapped
// by a hash of the key, compared on the whole key), else from a hash map
// (new slots from an atomic counter, inserted with BPF_NOEXIST). The
// per-slot counters are per CPU, plain adds, summed by Go (MaxStreams × 40
// bytes per CPU). The sequence bitmap is one BPF_F_MMAPABLE array shared
// by all CPUs, set with an atomic fetch-or whose old value tells a
// duplicate — the one atomic per packet of a known stream — so duplicates
// and missing are exact however the packets spread over CPUs. max_seq is
// the highest of the CPUs'. Reordered is counted per CPU, as the AF_PACKET method counts
// it per ring: a first copy that arrived after a higher sequence of the
// same stream on the same CPU (RX queue). With one RX queue per stream —
// a veth, or a NIC whose RSS hashes the stream to one queue — that is
// every reordered packet; packets of one stream that RSS spreads over
// queues (a range of UDP source ports) have no order between queues.
// The array is allocated up front: MaxStreams × SeqCapacity bits (8 MiB
// per stream by default). Test packets are dropped after counting
// (XDP_DROP: the receiver is a sink) unless Options.Pass; other packets
// always pass. The program attaches in native (driver) mode where the
// driver has it, else generic (SKB) mode, and Report.MethodReason says
// which. A new stream first seen on two CPUs at the same instant may use
// up two of the MaxStreams slots (one stays empty). Needs Linux 5.12
// (atomic fetch-or), CAP_BPF and CAP_NET_ADMIN. Measured here
// (docs/benchmarks.md): about 8 ns per packet more than a program that
// only counts packets (38 ns before the per-CPU cache and counters); 5.7
// Mpps over a veth with the sender on the same CPU.
//
// AF_PACKET ("afpacket", or "auto" when XDP cannot attach): one
// TPACKET_V3 ring per CPU in a PACKET_FANOUT_CPU group, each read by a
// goroutine pinned to its CPU into its own Table (the same Go accounting
// core, 7 to 10 ns per packet here); Stop merges the tables exactly — a
// sequence seen by two rings is a duplicate — except reordered, which is
// counted per ring (packets of a stream that arrive on different CPUs
// have no order between them). It only taps: packets continue to the
// stack. The rings' drops (PACKET_STATISTICS) are Report.RingDrops.
// Needs CAP_NET_RAW.
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
package receiver
