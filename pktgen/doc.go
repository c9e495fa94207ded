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
// starting at 1 at every start. clone_skb > 0 sends each built packet
// clone_skb+1 times, and burst B sends B copies per call, so those modes
// repeat sequence numbers; exact per-sequence accounting needs clone_skb 0
// and burst 1, while packet counts stay exact either way.
package pktgen
