// Package xsk is one AF_XDP socket over golang.org/x/sys/unix: its UMEM,
// its four rings, its bind and its wakeups. The AF_XDP sender
// (pktgen/afxdp) and receiver build on it; it knows nothing of pktgen's
// frames.
//
// # UMEM and rings
//
// The UMEM is one anonymous mmap of Frames × FrameSize bytes, registered
// with XDP_UMEM_REG in aligned mode: frame i starts at address
// i × FrameSize, and a descriptor's address is an offset into the UMEM.
// The defaults and why:
//
//   - FrameSize 2048 (DefaultFrameSize): the smallest chunk the kernel
//     takes (XDP_UMEM_MIN_CHUNK_SIZE). A received frame starts after the
//     kernel's 256-byte XDP_PACKET_HEADROOM, which leaves 1792 bytes: a
//     1518-byte Ethernet frame fits, and twice as many frames share the
//     cache as with a page per frame. Jumbo frames need 4096 (the largest
//     aligned chunk, a page).
//   - RingSize 2048 (DefaultRingSize): every ring has this many
//     descriptors (a power of two, as the kernel requires). 2048 is the
//     default of libxdp and of the kernel's xdpsock sample: a burst of
//     batches may be in flight while the application is descheduled for a
//     timer tick, and the four rings then take 96 KiB.
//   - Frames 2 × RingSize per direction (DefaultFrames): the TX ring and
//     the completion ring can each hold RingSize frames, as can the fill
//     ring and the RX ring, so with this many frames no ring ever waits
//     for a frame the application could not give it. With the defaults a
//     one-direction socket has 4096 frames, 8 MiB.
//
// # Producer and consumer
//
// The fill and TX rings are produced by the application and consumed by
// the kernel; the completion and RX rings the reverse. Each side keeps a
// cached copy of the other side's index and reads the shared one (an
// atomic load, which orders the descriptor reads after it) only when the
// cache says the ring is full or empty. A producer writes its descriptors
// and then publishes them with an atomic store of the producer index; a
// consumer reads its descriptors and then frees them with an atomic store
// of the consumer index. Go's sync/atomic operations are sequentially
// consistent, which is at least the acquire/release pairing the kernel's
// rings need (smp_load_acquire/smp_store_release in xsk_queue.h).
//
// # Bind: zero-copy, copy and need_wakeup
//
// Mode auto binds with XDP_ZEROCOPY first and, when the driver refuses,
// with XDP_COPY: zero-copy needs the driver's AF_XDP support (ice, i40e,
// mlx5, …); veth, virtio_net (before 6.x's support) and tun have only the
// copy mode, where the kernel copies each frame into an skb. Each attempt
// is a fresh socket. Mode() says which mode the socket has and why, from
// XDP_OPTIONS where the kernel has it (5.3+).
//
// A queue holds one socket at a time. The kernel lets go of a closed
// socket's queue some 10-20 ms later (deferred work), so Open retries a
// bind the kernel refuses as busy (EBUSY) for up to a second, and then
// says that another socket holds the queue.
//
// NeedWakeup asks for XDP_USE_NEED_WAKEUP: the kernel then sets
// XDP_RING_NEED_WAKEUP in the fill and TX rings' flags when it wants a
// syscall, and the application makes one only then (NeedsWakeup, Kick,
// Wakeup). A kernel older than 5.4 refuses the flag (EINVAL) and has no
// flags word in its rings; Open then binds without it, and
// NeedWakeup() says so as the reason. Without the flag the kernel
// expects a syscall after every TX submit (NeedsWakeup is always true).
//
// Privileges: CAP_NET_RAW (the socket) and CAP_IPC_LOCK or a large
// enough RLIMIT_MEMLOCK (the UMEM is pinned).
package xsk
