//go:build linux && traffic

package pktgen

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// These tests need the real kernel pktgen. They run inside the qemu guest
// that cmd/linerate/internal/vmtest boots (LINERATE_VMTEST_GUEST=1, pktgen and veth
// loaded); anywhere else they skip.
func guestOnly(t *testing.T) {
	t.Helper()
	if os.Getenv("LINERATE_VMTEST_GUEST") != "1" {
		t.Skip("needs the real pktgen module: runs inside the qemu guest of cmd/linerate/internal/vmtest")
	}
}

// vethPair makes lrpg0 <-> lrpg1, both up, and returns the peer's MAC.
// guestSysctl sets a sysctl of the guest for the test and restores it.
func guestSysctl(t *testing.T, path, value string) {
	t.Helper()
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	if err := os.WriteFile(path, []byte(value+"\n"), 0o644); err != nil {
		t.Fatalf("set %s to %s: %v", path, value, err)
	}
	t.Cleanup(func() { _ = os.WriteFile(path, old, 0o644) })
}

func vethPair(t *testing.T) string {
	t.Helper()
	return vethPairQueues(t, 1)
}

// vethPairQueues is vethPair with queues rx and tx queues on each end.
func vethPairQueues(t *testing.T, queues int) string {
	t.Helper()
	la := netlink.NewLinkAttrs()
	la.Name, la.NumTxQueues, la.NumRxQueues = "lrpg0", queues, queues
	if err := netlink.LinkAdd(&netlink.Veth{LinkAttrs: la, PeerName: "lrpg1", PeerNumTxQueues: uint32(queues), PeerNumRxQueues: uint32(queues)}); err != nil {
		t.Fatalf("add veth pair: %v", err)
	}
	t.Cleanup(func() {
		if l, err := netlink.LinkByName("lrpg0"); err == nil {
			netlink.LinkDel(l)
		}
	})
	var mac string
	for _, n := range []string{"lrpg0", "lrpg1"} {
		l, err := netlink.LinkByName(n)
		if err != nil {
			t.Fatal(err)
		}
		// No IPv6: its neighbour discovery and MLD would add packets to
		// the peer's counter that pktgen did not send.
		if err := os.WriteFile("/proc/sys/net/ipv6/conf/"+n+"/disable_ipv6", []byte("1\n"), 0o644); err != nil && !os.IsNotExist(err) {
			t.Fatalf("disable IPv6 on %s: %v", n, err)
		}
		if err := netlink.LinkSetUp(l); err != nil {
			t.Fatal(err)
		}
		mac = l.Attrs().HardwareAddr.String()
	}
	// pktgen refuses a device without carrier: wait for the pair to come up.
	for i := 0; i < 50; i++ {
		if b, _ := os.ReadFile("/sys/class/net/lrpg0/carrier"); strings.TrimSpace(string(b)) == "1" {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	return mac
}

func rxPackets(t *testing.T, dev string) uint64 {
	t.Helper()
	b, err := os.ReadFile("/sys/class/net/" + dev + "/statistics/rx_packets")
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return n
}

func guestConfig(t *testing.T, mac string) Config {
	c := baseConfig()
	c.Device, c.CPUs, c.Count = "lrpg0", []int{0}, 50000
	c.DstMAC, _ = parseMAC(mac)
	return c
}

func noDevicesLeft(t *testing.T) {
	t.Helper()
	ents, err := os.ReadDir(DefaultProcDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if n := e.Name(); n != "pgctrl" && !strings.HasPrefix(n, "kpktgend_") {
			t.Errorf("device entry %s left in %s", n, DefaultProcDir)
		}
	}
}

func TestGuestKernelCount(t *testing.T) {
	guestOnly(t)
	mac := vethPair(t)
	k := NewKernel(nil)
	if v, err := k.Available(); err != nil || !strings.Contains(v, "Packet Generator") {
		t.Fatalf("pgctrl: %q %v", v, err)
	}
	cfg := guestConfig(t, mac)
	cfg.CPUs = []int{0, 1}
	cfg.Counts = SplitCount(100001, 2)
	// Both threads start at one instant into one veth: the peer's
	// backlog (netdev_max_backlog, 1000 by default) overflowing would be
	// pktgen errors (NET_XMIT_DROP, sent again), the guest's, not ours.
	guestSysctl(t, "/proc/sys/net/core/netdev_max_backlog", "200000")
	before := rxPackets(t, "lrpg1")
	sum, err := k.Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := rxPackets(t, "lrpg1") - before
	if sum.Packets != 100001 || sum.Threads[0].Packets != 50001 || sum.Threads[1].Packets != 50000 || got != 100001 {
		t.Fatalf("sent %d (%d+%d per Result), peer received %d; want 100001 everywhere", sum.Packets, sum.Threads[0].Packets, sum.Threads[1].Packets, got)
	}
	if sum.Errors != 0 || sum.PPS <= 0 || sum.USec == 0 {
		t.Errorf("summary %+v", sum)
	}
	t.Logf("pktgen on veth under TCG: %d packets in %d us = %.0f pps", sum.Packets, sum.USec, sum.PPS)
	noDevicesLeft(t)
}

func TestGuestKernelDurationAndStop(t *testing.T) {
	guestOnly(t)
	mac := vethPair(t)
	cfg := guestConfig(t, mac)
	cfg.Count, cfg.Duration = 0, 300*time.Millisecond
	before := rxPackets(t, "lrpg1")
	samples := 0
	sum, err := NewKernel(nil).Run(context.Background(), cfg, func(p Progress) { samples++ })
	if err != nil {
		t.Fatal(err)
	}
	if got := rxPackets(t, "lrpg1") - before; sum.Packets == 0 || got != sum.Packets || samples == 0 {
		t.Fatalf("timed run: sent %d, peer got %d, %d progress samples", sum.Packets, got, samples)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	cfg.Duration = time.Hour
	sum, err = NewKernel(nil).Run(ctx, cfg, nil)
	if err != nil || !sum.Interrupted || sum.Packets == 0 {
		t.Fatalf("cancelled run: %+v %v", sum, err)
	}
	noDevicesLeft(t)
}

func TestGuestKernelRefusals(t *testing.T) {
	guestOnly(t)
	mac := vethPair(t)
	k := NewKernel(nil)
	k.defaults()
	// burst on veth: the kernel says ENOTSUPP (524 before 6.15, EOPNOTSUPP after).
	cfg := guestConfig(t, mac)
	cfg.Burst = 32
	_, err := k.Run(context.Background(), cfg, nil)
	if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "burst") {
		t.Fatalf("burst on veth: %v, want ErrNotSupported", err)
	}
	t.Logf("burst on veth: %v", err)
	cfg.AllowFallback = true
	sum, err := k.Run(context.Background(), cfg, nil)
	if err != nil || len(sum.Warnings) == 0 || sum.Packets != cfg.Count {
		t.Fatalf("burst with fallback: %+v %v", sum, err)
	}
	// A bad command is EINVAL with "No such parameter"; an unknown flag is
	// a successful write whose Result says it is unknown.
	if err := k.ctl("reset"); err != nil {
		t.Fatal(err)
	}
	defer k.ctl("reset")
	if err := k.addDevice(context.Background(), 0, "lrpg0@0"); err != nil {
		t.Fatal(err)
	}
	err = k.set("lrpg0@0", "bogus 1", true)
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "No such parameter") {
		t.Errorf("bogus parameter: %v", err)
	}
	err = k.set("lrpg0@0", "flag BOGUS", true)
	var ce *CommandError
	if !errors.As(err, &ce) || ce.Err != nil || !strings.Contains(ce.Result, "unknown") {
		t.Errorf("unknown flag: %v", err)
	}
	if err := k.addDevice(context.Background(), 1, "nosuch0@1"); !errors.Is(err, ErrNoDevice) {
		t.Errorf("missing device: %v", err)
	}
	feats, err := k.Probe(context.Background(), "lrpg0", 0)
	if err != nil || feats.Burst || feats.CloneSkb || !feats.QueueXmit || feats.NodeFlag != "NODE" {
		t.Errorf("veth features on this kernel: %+v %v", feats, err)
	}
	// What the probe found refuses, by name, what veth cannot send (the
	// agent's check before a send): a burst, clone_skb, a node for a
	// device that has none.
	for _, tc := range []struct {
		set  func(*Config)
		want string
	}{
		{func(c *Config) { c.Burst = 4 }, "burst: 4: lrpg0 cannot send one skb several times"},
		{func(c *Config) { c.CloneSkb = 2 }, "clone_skb: 2: lrpg0 cannot send one skb several times"},
		{func(c *Config) { c.HasNode, c.Node = true, 0 }, "lrpg0 has no NUMA node"},
	} {
		c := guestConfig(t, "02:00:00:00:00:02")
		tc.set(&c)
		if err := c.KernelCheck(feats, DeviceFacts{NUMANode: -1}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("veth: %v, want %q", err, tc.want)
		}
	}
	noDevicesLeft(t)
}

// beforeStart is a Proc that, just before pktgen's start, reads back
// what the kernel holds: every device file and thread file.
type beforeStart struct {
	Proc
	files []string
	read  map[string]string
}

func (b *beforeStart) Start(at time.Time) error {
	b.read = map[string]string{}
	for _, f := range b.files {
		if data, err := b.Proc.Read(f); err == nil {
			b.read[f] = string(data)
		}
	}
	return b.Proc.Start(at)
}

// countStreams counts, on dev, the frames that carry the pktgen header,
// per IPv4 source address, and the highest sequence of each, until stop
// is closed and nothing more arrives. drops are the socket's own.
type streamCount struct {
	frames, maxSeq map[string]uint64
	drops          uint32
}

func countStreams(t *testing.T, dev string) (stop func() streamCount) {
	t.Helper()
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, int(htons(unix.ETH_P_IP)))
	if err != nil {
		t.Fatalf("packet socket: %v", err)
	}
	l, err := netlink.LinkByName(dev)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_IP), Ifindex: l.Attrs().Index}); err != nil {
		t.Fatalf("bind packet socket to %s: %v", dev, err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 64<<20); err != nil {
		t.Fatalf("packet socket buffer: %v", err)
	}
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Usec: 200_000}); err != nil {
		t.Fatal(err)
	}
	res := streamCount{frames: map[string]uint64{}, maxSeq: map[string]uint64{}}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 2048)
		for {
			n, _, err := unix.Recvfrom(fd, buf, 0)
			if err != nil {
				select {
				case <-quit: // stopped and drained: a read timed out
					return
				default:
					continue
				}
			}
			off := HeaderOffset(false, 0, 0)
			if n < off+HeaderLen {
				continue
			}
			h, err := DecodeHeader(buf[off:n])
			if err != nil {
				continue
			}
			src := netip.AddrFrom4([4]byte(buf[26:30])).String()
			res.frames[src]++
			res.maxSeq[src] = max(res.maxSeq[src], uint64(h.Seq))
		}
	}()
	return func() streamCount {
		close(quit)
		<-done
		if st, err := unix.GetsockoptTpacketStats(fd, unix.SOL_PACKET, unix.PACKET_STATISTICS); err == nil {
			res.drops = st.Drops
		}
		unix.Close(fd)
		return res
	}
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// Two pktgen devices on one kpktgend thread, each on its own TX queue of
// a 2-queue veth: the kernel holds both on the thread with their own
// queue_map, each sends its own count exactly, each is its own stream
// (source address, sequence) at the peer, and each has its own started.
func TestGuestKernelDevicesPerThread(t *testing.T) {
	guestOnly(t)
	mac := vethPairQueues(t, 2)
	cfg := guestConfig(t, mac)
	cfg.CPUs, cfg.Queues, cfg.Counts, cfg.Flags = []int{1, 1}, []int{0, 1}, SplitCount(20001, 2), []string{"NO_TIMESTAMP"}
	guestSysctl(t, "/proc/sys/net/core/netdev_max_backlog", "200000")
	proc := &beforeStart{Proc: DirProc{Dir: DefaultProcDir}, files: []string{"kpktgend_1", "lrpg0@1q0", "lrpg0@1q1"}}
	k := NewKernel(nil)
	k.Proc = proc
	stop := countStreams(t, "lrpg1")
	before := rxPackets(t, "lrpg1")
	sum, err := k.Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := rxPackets(t, "lrpg1") - before
	streams := stop()

	thread := proc.read["kpktgend_1"]
	if !strings.Contains(thread, "lrpg0@1q0") || !strings.Contains(thread, "lrpg0@1q1") {
		t.Errorf("kpktgend_1 before start does not hold both devices:\n%s", thread)
	}
	for i, entry := range []string{"lrpg0@1q0", "lrpg0@1q1"} {
		df, err := ParseDeviceFile(entry, strings.NewReader(proc.read[entry]))
		if err != nil {
			t.Fatalf("%s before start: %v\n%s", entry, err, proc.read[entry])
		}
		if qmin, qmax := fmt.Sprint(df.Params["queue_map_min"]), fmt.Sprint(df.Params["queue_map_max"]); qmin != fmt.Sprint(i) || qmax != fmt.Sprint(i) {
			t.Errorf("%s: the kernel holds queue_map %s-%s, want %d", entry, qmin, qmax, i)
		}
	}
	if sum.Packets != 20001 || got != 20001 || sum.Errors != 0 || len(sum.Threads) != 2 {
		t.Fatalf("sent %d (%d errors) in %d streams, peer received %d; want 20001 without errors in 2", sum.Packets, sum.Errors, len(sum.Threads), got)
	}
	for i, want := range []struct {
		entry   string
		packets uint64
		src     string
	}{{"lrpg0@1q0", 10001, "198.18.1.1"}, {"lrpg0@1q1", 10000, "198.18.1.2"}} {
		th := sum.Threads[i]
		if th.CPU != 1 || th.Entry != want.entry || th.Queue == nil || *th.Queue != i || th.Packets != want.packets || th.Src != want.src || th.FirstFrameNs == 0 {
			t.Errorf("stream %d: %+v, want cpu 1, %s, queue %d, %d packets from %s, a first frame", i, th, want.entry, i, want.packets, want.src)
		}
		if streams.frames[want.src] != want.packets || streams.maxSeq[want.src] != want.packets {
			t.Errorf("stream %s at the peer: %d frames, highest sequence %d; want %d of each (socket drops %d)",
				want.src, streams.frames[want.src], streams.maxSeq[want.src], want.packets, streams.drops)
		}
	}
	a, b := sum.Threads[0].FirstFrameNs, sum.Threads[1].FirstFrameNs
	if d := time.Duration(int64(b) - int64(a)); d < -time.Second || d > time.Second {
		t.Errorf("the devices of one thread started %s apart", d)
	}
	t.Logf("two devices on kpktgend_1: %d packets in %d us = %.0f pps; started %d ns apart; peer streams %v", sum.Packets, sum.USec, sum.PPS, int64(b)-int64(a), streams.frames)
	noDevicesLeft(t)
}
