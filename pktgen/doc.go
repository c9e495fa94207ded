// Package pktgen makes packets for linerate's senders.
//
// The kernel backend drives the Linux kernel's packet generator through
// /proc/net/pktgen (module pktgen, CONFIG_NET_PKTGEN): one write(2) per
// command, each checked by re-reading the file's "Result:" line, threads
// bound one per planned CPU (kpktgend_<cpu>), and a reset on every exit
// path so that no device stays attached to a pktgen thread. Writing needs
// CAP_NET_ADMIN in the initial user namespace.
//
// Where pktgen is absent, the userspace backends send the same frames
// (BuildFrame) through the same Backend interface: package pktgen/xdp
// (XDP live frames, millions of packets per second per core) and package
// pktgen/afpacket (AF_PACKET sendmmsg, portable).
//
// The package also owns the wire format every backend shares and the
// receiver decodes: the 16-byte pktgen Header (magic 0xbe9be955, sequence,
// timestamp) at the start of the UDP payload, and the parser for a pktgen
// device file (Params, Current and Result, every format from 2004 to now).
//
// Sequence numbers: each device entry (one per thread) is its own stream,
// starting at 1 at every start. clone_skb C sends each built packet C
// times (0 and 1 both once) and burst B sends B copies per call, so a
// built packet goes out C × B times (Config.Copies) with its first copy's
// sequence, and pktgen, which numbers every packet it sends, gives the
// next one C × B more: a thread of count n sends ⌈n / (C × B)⌉ built
// packets, the last with fewer copies where C × B does not divide n. A
// receiver counts them exactly with repeats and a sequence stride of
// C × B (receiver Options.Repeats, SeqStride).
package pktgen
