// Package xdp is linerate's fastest generator where the kernel's pktgen
// is absent: the kernel's XDP live-frame mode (BPF_PROG_RUN with
// BPF_F_TEST_XDP_LIVE_FRAMES, Linux 5.18+), the mechanism of
// xdp-tools' xdp-trafficgen.
//
// One XDP program, built at run time with cilium/ebpf's asm package (no
// clang), serves every thread. Each thread is pinned to its CPU and runs
// the program over its own template frame (pktgen.BuildFrame: its own
// source address, so its own sequence stream) with XDP_TX, which live
// mode turns into a transmit out of the interface. Per frame the program
// writes the pktgen header's sequence number (a counter in the CPU's slot
// of a memory-mapped state map), the CLOCK_REALTIME timestamp unless
// NO_TIMESTAMP, the UDP source port of the range's cycle, and with
// UDPCSUM the UDP checksum (from a precomputed base, exact for every
// frame). The IPv4 header does not change, so its checksum stays right.
// The timestamp is a clock reading taken at the first frame of each of
// the kernel's transmit bulks (16 frames, which reach the driver
// together) and carried by every frame of the bulk; paced frames each
// read the clock. A reading costs more than the rest of the program
// (docs/benchmarks.md), which is why it is not taken for every frame.
//
// Counts are exact: the program stops transmitting (drops) once the
// thread's limit is reached, and the count is the program's own counter.
// Rate control is in the program too: a frame that is not due yet is
// dropped and the program runs again at once (nanosecond pacing, a spin
// in the kernel like pktgen's own for short gaps).
//
// Costs on Linux 6.18 (2 vCPU, veth): every BPF_PROG_RUN call with
// repeat > 1 costs about 20 ms of setup (the kernel installs the program
// in its XDP dispatcher and removes it again, each an RCU grace period),
// so a run is one call (repeat: the count, or as many as the kernel
// takes) and a stop interrupts it (the limit drops to 0 and a signal
// ends the syscall).
// At the start of each call the paced schedule catches up at most 30 ms.
//
// What the interface needs: the driver's ndo_xdp_xmit (the netdev
// xdp-features bit "ndo-xmit", read on 6.3+). A veth advertises it only
// while its peer has an XDP program attached or GRO enabled (`ethtool -K
// PEER gro on`); otherwise the peer discards every XDP frame without a
// trace in any counter. Some drivers (virtio_net; NIC drivers such as
// ixgbe and i40e) set up their XDP transmit rings only while a native
// XDP program is attached to the sending interface itself (without one
// virtio_net's ndo_xdp_xmit refuses every frame, ENXIO, before any
// counter moves): on 6.3+ their xdp-features say so (no ndo-xmit), and
// before (the VM lab's Debian 6.1 guests) the driver's name does
// (ownProgramDrivers). For such an interface with no program attached, a
// run attaches its own, lr_xmit_pass (XDP_PASS, so what the interface
// receives is unchanged), in native mode, and detaches it after; the
// summary's notes say so. It is held by a BPF link that nothing pins,
// so the kernel detaches it when the process ends, however it ends. A
// native program already there is used and left; a generic one refuses
// the send by name, since the kernel will not attach a native program
// beside it (needsOwn). virtio_net moves a frame's data pointer back
// over its own header when it transmits, and a 6.1 kernel transmits a
// recycled page's frame from where the driver left it (12 zero bytes
// more each time): there each run cuts 4 bytes off a template that much
// longer, which has the kernel rebuild the frame (rebuildDrivers).
// Frames the driver could not transmit are counted from its ethtool
// statistics when it has them (veth: tx_queue_N_xdp_xmit; virtio_net:
// tx_queue_N_xdp_tx less tx_queue_N_xdp_tx_drops): they are reported as
// errors and not as packets, and leave gaps in the sequence; a driver
// that transmitted none fails the run.
//
// Privileges: CAP_BPF and CAP_NET_ADMIN (or root). Frames are at most
// 3520 bytes (a page less the XDP headroom and tail).
package xdp
