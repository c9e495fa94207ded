// Package afxdp is linerate's AF_XDP generator: one AF_XDP socket
// (internal/xsk) per TX queue, each with its own UMEM, written by one
// thread pinned to that queue's planned CPU (pktgen.Config's CPUs and
// Queues, as the agent's topology plan gives them; without a plan thread
// i sends on queue i).
//
// Each thread sends its own template (pktgen.BuildFrame: its own source
// address, so its own sequence stream). Every UMEM frame holds a copy of
// the template; per packet only what pktgen changes is rewritten
// (Frame.Stamp: the sequence number, the CLOCK_REALTIME timestamp of the
// batch unless NO_TIMESTAMP, the UDP source port of the range's cycle,
// and the UDP checksum with UDPCSUM), as the AF_PACKET engine stamps. A
// thread reserves a batch of TX descriptors, stamps one frame for each,
// submits them, kicks the kernel (sendto) when the ring asks for it, and
// takes completed frames back from the completion ring. Packets are the
// completed frames, so a count is exact: the thread stops stamping at its
// count and waits for every frame to complete.
//
// Mode: zero-copy when the driver binds it, copy mode otherwise (veth,
// virtio_net before its AF_XDP support, tun); the summary's notes say
// which, and why (the driver's refusal). In copy mode the kernel sends
// synchronously inside each kick, at most its budget of frames (32, or the
// ring's size where XDP_MAX_TX_SKB_BUDGET lets it be raised, 6.17+).
//
// need_wakeup (pktgen.NeedWakeup, `--need-wakeup`): auto is on for a
// physical NIC and off for a virtual device (Virtual: the ethtool driver
// name, veth, virtio_net, tun and the like, or no bus address), because a
// virtual device's AF_XDP transmit is synchronous inside sendto and the
// flag only adds a check, while a zero-copy NIC's NAPI sends the ring by
// itself and the flag spares a syscall per batch. on and off force it. A
// kernel that refuses XDP_USE_NEED_WAKEUP (before 5.4) gets sockets bound
// without it and a warning in the summary.
//
// A frame the driver dropped after the kernel took it (copy mode's EBUSY:
// NET_XMIT_DROP, such as a veth peer's full backlog) counts as a packet
// sent: the device counts it in its tx_dropped, and the books find it lost
// in the sender host. Kernel pktgen and the AF_PACKET engine send such a
// frame again with its sequence number; AF_XDP cannot, as its completion
// ring does not say which frame was dropped. The summary warns of them.
//
// Privileges: CAP_NET_RAW (the socket) and CAP_IPC_LOCK or enough
// RLIMIT_MEMLOCK (each socket pins a UMEM of 2 × the ring size frames: 8
// MiB with the defaults).
package afxdp
