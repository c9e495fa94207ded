// Package afpacket is linerate's portable generator where the kernel's
// pktgen is absent and XDP live frames cannot run: AF_PACKET raw sockets
// with PACKET_QDISC_BYPASS (the driver's transmit, as pktgen's
// start_xmit), frames sent in batches with sendmmsg(2).
//
// One socket and one thread per CPU, each thread pinned to its CPU and
// sending its own template (pktgen.BuildFrame: its own source address,
// so its own sequence stream). A batch is a ring of per-slot copies of
// the template; per packet only what pktgen changes is rewritten
// (Frame.Stamp: the sequence number, the timestamp unless NO_TIMESTAMP,
// the UDP source port of the range's cycle, and the UDP checksum with
// UDPCSUM).
//
// A frame the kernel refuses (ENOBUFS: the driver's queue was full or
// the device dropped it; EAGAIN: the send buffer stayed full for the
// send timeout) is sent again with the same sequence number and counted
// as an error, as pktgen counts its transmit drops: Packets are the
// frames the kernel took, and the sequence has no gaps.
//
// PACKET_TX_RING (TPACKET_V2) was measured against sendmmsg on a veth
// pair, 64-byte frames, one CPU, into xdp-bench drop, and was no faster:
// 1.47-1.54 Mpps (256 or 1024 slots, one send per 64 or 256) against
// 1.58 Mpps for sendmmsg batches of 64 and 1.59 Mpps for trafgen, which
// sends from such a ring (docs/benchmarks.md); batches of 16 to 1024 were
// all alike. burst > 1 is refused: every frame has its own sequence
// number, and sendmmsg already batches.
//
// Privileges: CAP_NET_RAW.
package afpacket
