package pktgen

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/linerate/linerate/internal/enum"
	"github.com/linerate/linerate/internal/errjoin"
)

// ErrConfig is returned when a Config value is impossible; the message
// names the field and the valid range.
var ErrConfig = errors.New("invalid pktgen config")

// XmitMode is how pktgen hands its frames to the device (xmit_mode).
type XmitMode string

// NodeOfDevice is a Config's Node before the host fills in the NUMA
// node of its device.
const NodeOfDevice = -1

// Xmit modes.
const (
	XmitStart        XmitMode = "start_xmit"    // driver ndo_start_xmit, bypasses the qdisc (default)
	XmitNetifReceive XmitMode = "netif_receive" // inject into the receive path
	XmitQueue        XmitMode = "queue_xmit"    // dev_queue_xmit: through the qdisc
)

// XmitModes lists every xmit mode, the default first: the one list its
// check and help say.
var XmitModes = []XmitMode{XmitStart, XmitNetifReceive, XmitQueue}

// Flags pktgen knows (flag NAME / flag !NAME). NODE_ALLOC is the name
// kernels before the flag table used; Run falls back to it for NODE.
var knownFlags = []string{
	"IPV6", "IPSRC_RND", "IPDST_RND", "TXSIZE_RND", "UDPSRC_RND", "UDPDST_RND", "UDPCSUM",
	"NO_TIMESTAMP", "MPLS_RND", "QUEUE_MAP_RND", "QUEUE_MAP_CPU", "FLOW_SEQ", "FLOW_RND", "IPSEC",
	"MACSRC_RND", "MACDST_RND", "VID_RND", "SVID_RND", "NODE", "NODE_ALLOC", "SHARED",
}

// Config describes one pktgen run on one device. Its unit is the stream:
// one pktgen device entry with its own sequence stream, sent by the
// pktgen thread of its CPU. "Thread i" in the fields below is stream i:
// CPUs[i] sends it, and the per-thread fields (Counts, Rates, ThreadDst,
// SrcPerThread, Queues) give it its own share. Usually every stream has a
// CPU of its own (entry "<Device>@<cpu>"); with Queues, the kernel
// backend may put several streams on one CPU's thread, each on its own
// TX queue (entry "<Device>@<cpu>q<queue>", pktgen's "dev@N" naming: one
// kpktgend thread, several devices). Zero values mean "the kernel's
// default" unless a field says otherwise.
type Config struct {
	Device string // interface to send from
	// CPUs is the pktgen thread (kpktgend_<cpu>) of each stream. A CPU
	// appears once, or (with Queues) once per queue its thread sends on.
	CPUs []int

	Count uint64 // packets per thread; 0 = until Duration or Stop
	// Counts, when set, gives each thread its own count (len(CPUs) entries),
	// e.g. a total split evenly with the remainder on the first threads.
	Counts   []uint64
	Duration time.Duration // stop after this long; 0 = until Count

	PktSize    int // frame size without the 4-byte FCS (pktgen's pkt_size)
	MinPktSize int // size range (PktSize must be 0); sizes cycle, or random with TXSIZE_RND
	MaxPktSize int
	// IMIX is an internet mix (exclusive with PktSize and ranges); its
	// sizes count the FCS, unlike PktSize (IMIXEntry).
	IMIX  IMIX
	Frags int

	Burst    int // xmit_more burst; 0 or 1 = none
	CloneSkb int // reuse each skb this many more times; 0 = a new skb per packet

	// Rate per thread: at most one of these.
	DelayNS  uint64 // inter-packet gap in ns
	RatePPS  uint64 // packets per second
	RateMbps uint64 // Mb/s (pktgen computes the gap from min_pkt_size)
	// Rates, when set, gives each thread its own packets per second
	// (len(CPUs) entries, each at least 1): a flow's rate split with the
	// remainder on the first threads (SplitRate), so that the threads
	// together send exactly the flow's rate.
	Rates []uint64

	DstMin, DstMax netip.Addr // destination range (IPv4 or IPv6); DstMax may be zero
	SrcMin, SrcMax netip.Addr // source range; zero = the device's address
	// SrcPerThread gives thread i the single source SrcMin+i, so that a
	// receiver can tell the threads' sequence streams apart.
	SrcPerThread bool

	DstMAC, SrcMAC net.HardwareAddr

	// ThreadDst, when set, gives thread i its own destination (address
	// and MAC) in place of DstMin/DstMAC: one sender feeding several
	// receivers (fan-out, mesh). One entry per CPU.
	ThreadDst []Dest

	// UDP port ranges, inclusive (pktgen's max is exclusive; Commands converts).
	UDPSrcMin, UDPSrcMax int
	UDPDstMin, UDPDstMax int

	Flows, FlowLen int

	VLANID   int // -1 or 0..4095; set HasVLAN
	HasVLAN  bool
	VLANPrio int // 0..7
	VLANCFI  int // 0..1

	TOS    int // 0..255, with HasTOS
	HasTOS bool

	QueueMapMin, QueueMapMax int // with HasQueueMap
	HasQueueMap              bool
	// Queues, when set, pins thread i to TX queue Queues[i] (queue_map_min
	// = queue_map_max), pairing it with the queue whose IRQ is on its CPU.
	// Streams on one CPU must have different queues; streams on
	// different CPUs may share one.
	Queues []int

	// Node is the NUMA node for allocations, with flag NODE and HasNode;
	// NodeOfDevice asks the host to fill in its device's node (the
	// agent's node_alloc) before the config is validated.
	Node    int
	HasNode bool

	Flags    []string // e.g. QUEUE_MAP_CPU, UDPSRC_RND, NO_TIMESTAMP, NODE, UDPCSUM; "!NAME" clears
	XmitMode XmitMode // "" = XmitStart

	// NeedWakeup is the afxdp backend's need_wakeup policy ("" = auto);
	// the other backends refuse on and off.
	NeedWakeup NeedWakeup

	// AllowFallback lets Run fall back to burst 1 / clone_skb 0, with a
	// warning, when the device refuses skb sharing (veth, lo, bonds).
	AllowFallback bool

	// StartAt, when set, is the instant (wall clock) the first frames
	// go: a backend arms everything first (devices, sockets, frames,
	// programs) and then waits for it with WaitUntil. Zero: at once.
	StartAt time.Time

	// SleepPacing paces the userspace engines by sleeping only, where they
	// would spin through the last 100 µs of every gap: for a probe whose
	// gaps need not be exact because every frame carries its own send
	// time (a round trip's latency stream), so that it takes next to none
	// of the CPU it shares with the load beside it (a spin of 100 µs a
	// frame is a tenth of a CPU at 1,000 pps). Kernel pktgen ignores it.
	SleepPacing bool
}

func cfgErr(field, format string, args ...any) error {
	return fmt.Errorf("%s: %s: %w", field, fmt.Sprintf(format, args...), ErrConfig)
}

// Validate rejects impossible values before the kernel sees them.
func (c *Config) Validate() error {
	var errs []error
	add := func(err error) { errs = append(errs, err) }
	switch {
	case c.Device == "":
		add(cfgErr("device", "empty: name the interface to send from"))
	case len(c.Device) > 15 || strings.ContainsAny(c.Device, "/@ \t\n"):
		add(cfgErr("device", "%q is not an interface name (at most 15 characters, no '/', '@' or spaces)", c.Device))
	}
	if len(c.CPUs) == 0 {
		add(cfgErr("cpus", "no CPU: pktgen needs at least one thread"))
	}
	if err := c.checkCPUs(); err != nil {
		add(err)
	}
	if err := c.NeedWakeup.Check(); err != nil {
		add(cfgErr("need_wakeup", "%v", err))
	}
	if c.Counts != nil && len(c.Counts) != len(c.CPUs) {
		add(cfgErr("counts", "%d per-thread counts for %d CPUs", len(c.Counts), len(c.CPUs)))
	}
	if c.Queues != nil && (len(c.Queues) != len(c.CPUs) || c.HasQueueMap) {
		add(cfgErr("queues", "%d per-thread queues for %d CPUs (and not with a queue_map range)", len(c.Queues), len(c.CPUs)))
	}
	for _, q := range c.Queues {
		if q < 0 || q > 65535 {
			add(cfgErr("queues", "queue %d out of range 0-65535", q))
		}
	}
	if c.Queues != nil {
		for _, f := range []string{"QUEUE_MAP_CPU", "QUEUE_MAP_RND"} {
			if c.HasFlag(f) {
				add(cfgErr("queues", "per-thread queues with flag %s: the flag overrides queue_map_min/max (pktgen's set_cur_queue_map); give one of them", f))
			}
		}
	}
	if c.total() == 0 && c.Duration <= 0 {
		add(cfgErr("count", "neither a count nor a duration: the run would never end"))
	}
	for i := range c.CPUs {
		if n := c.CountOf(i); n > 9_999_999_999 {
			add(cfgErr("count", "%d per thread exceeds pktgen's 10 digits", n))
		}
	}
	if c.Duration < 0 {
		add(cfgErr("duration", "%s is negative", c.Duration))
	}
	minFrame := MinFrame(c.ipv6(), c.HasVLAN)
	checkSize := func(field string, v int) {
		if v != 0 && (v < minFrame || v > PktSizeLimit) {
			add(cfgErr(field, "%d: want %d-%d (frame without FCS, room for headers and the 16-byte pktgen header)", v, minFrame, PktSizeLimit))
		}
	}
	checkSize("pkt_size", c.PktSize)
	checkSize("min_pkt_size", c.MinPktSize)
	checkSize("max_pkt_size", c.MaxPktSize)
	if (c.MinPktSize != 0) != (c.MaxPktSize != 0) || c.MinPktSize > c.MaxPktSize {
		add(cfgErr("min_pkt_size", "range %d-%d: set both, min <= max", c.MinPktSize, c.MaxPktSize))
	}
	if c.PktSize != 0 && (c.MinPktSize != 0 || len(c.IMIX) > 0) {
		add(cfgErr("pkt_size", "set one of pkt_size, a size range, or imix"))
	}
	if len(c.IMIX) > 0 {
		if c.MinPktSize != 0 {
			add(cfgErr("imix", "set one of a size range or imix"))
		}
		if len(c.IMIX) > MaxIMIX {
			add(cfgErr("imix", "%d entries, pktgen takes at most %d", len(c.IMIX), MaxIMIX))
		}
		for _, e := range c.IMIX {
			checkSize("imix size", e.PktSize())
			if e.Weight <= 0 {
				add(cfgErr("imix weight", "%d for size %d: want > 0", e.Weight, e.Size))
			}
		}
		if c.CloneSkb > 0 {
			add(cfgErr("clone_skb", "must be 0 with imix"))
		}
	}
	if c.Frags < 0 || c.Frags > 17 {
		add(cfgErr("frags", "%d: want 0-17", c.Frags))
	}
	if c.Burst < 0 || c.Burst > 65535 {
		add(cfgErr("burst", "%d: want 1-65535 (0 means 1)", c.Burst))
	}
	if c.CloneSkb < 0 || c.CloneSkb > 1<<30 {
		add(cfgErr("clone_skb", "%d: want >= 0", c.CloneSkb))
	}
	rates := 0
	for _, set := range []bool{c.DelayNS > 0, c.RatePPS > 0, c.RateMbps > 0, c.Rates != nil} {
		if set {
			rates++
		}
	}
	if rates > 1 {
		add(cfgErr("rate", "set one of delay, rate (Mb/s), ratep (pps) and per-thread rates"))
	}
	if c.Rates != nil && len(c.Rates) != len(c.CPUs) {
		add(cfgErr("rates", "%d per-thread rates for %d CPUs", len(c.Rates), len(c.CPUs)))
	}
	if slices.Contains(c.Rates, 0) {
		add(cfgErr("rates", "%v: a per-thread rate of 0 pps would send unpaced: want at least 1 pps per thread", c.Rates))
	}
	switch {
	case !c.DstMin.IsValid():
		add(cfgErr("dst", "missing: the destination IP address"))
	case c.DstMax.IsValid() && (c.DstMax.Is4() != c.DstMin.Is4() || c.DstMax.Less(c.DstMin)):
		add(cfgErr("dst_max", "%s: same family as dst_min %s and not below it", c.DstMax, c.DstMin))
	}
	if c.SrcMin.IsValid() && c.DstMin.IsValid() && c.SrcMin.Is4() != c.DstMin.Is4() {
		add(cfgErr("src", "%s and destination %s are of different IP families", c.SrcMin, c.DstMin))
	}
	if c.SrcMax.IsValid() && (!c.SrcMin.IsValid() || c.SrcMax.Less(c.SrcMin) || c.SrcMax.Is4() != c.SrcMin.Is4()) {
		add(cfgErr("src_max", "%s: needs src_min of the same family not above it", c.SrcMax))
	}
	if len(c.ThreadDst) > 0 {
		if len(c.ThreadDst) != len(c.CPUs) {
			add(cfgErr("thread_dst", "%d destinations for %d threads: want one per thread", len(c.ThreadDst), len(c.CPUs)))
		}
		if c.DstMax.IsValid() && c.DstMax != c.DstMin {
			add(cfgErr("thread_dst", "per-thread destinations exclude a destination range (dst_max)"))
		}
		for i, d := range c.ThreadDst {
			switch {
			case !d.Addr.IsValid():
				add(cfgErr("thread_dst", "thread %d: no address", i))
			case c.DstMin.IsValid() && d.Addr.Is4() != c.DstMin.Is4():
				add(cfgErr("thread_dst", "thread %d: %s is not of dst_min %s's family", i, d.Addr, c.DstMin))
			case len(d.MAC) != 6:
				add(cfgErr("thread_dst", "thread %d: MAC %q is not 6 bytes", i, d.MAC))
			}
		}
	}
	for _, a := range []struct {
		field string
		addr  netip.Addr
	}{{"dst", c.DstMin}, {"dst_max", c.DstMax}, {"src", c.SrcMin}, {"src_max", c.SrcMax}} {
		if err := CheckTestAddr(a.addr); err != nil {
			add(cfgErr(a.field, "%v", err))
		}
	}
	for i, d := range c.ThreadDst {
		if err := CheckTestAddr(d.Addr); err != nil {
			add(cfgErr("thread_dst", "thread %d: %v", i, err))
		}
	}
	if c.SrcPerThread && !c.SrcMin.IsValid() {
		add(cfgErr("src", "one source per thread needs a first source address"))
	}
	for _, m := range []struct {
		name string
		mac  net.HardwareAddr
	}{{"dst_mac", c.DstMAC}, {"src_mac", c.SrcMAC}} {
		if m.mac != nil && len(m.mac) != 6 {
			add(cfgErr(m.name, "%s is not a 6-byte Ethernet address", m.mac))
		}
	}
	for _, p := range []struct {
		name     string
		min, max int
	}{{"udp_src", c.UDPSrcMin, c.UDPSrcMax}, {"udp_dst", c.UDPDstMin, c.UDPDstMax}} {
		if p.min < 0 || p.max < 0 || p.min > 65535 || p.max > 65534 && p.max != p.min || (p.max != 0 && p.max < p.min) {
			add(cfgErr(p.name, "range %d-%d: want 0 <= min <= max, max <= 65534 (pktgen's upper bound is exclusive)", p.min, p.max))
		}
	}
	if c.Flows < 0 || c.Flows > 65536 || c.FlowLen < 0 {
		add(cfgErr("flows", "%d flows of %d packets: want 0-65536 flows", c.Flows, c.FlowLen))
	}
	if c.HasVLAN && (c.VLANID < 0 || c.VLANID > 4095 || c.VLANPrio < 0 || c.VLANPrio > 7 || c.VLANCFI < 0 || c.VLANCFI > 1) {
		add(cfgErr("vlan", "id %d prio %d cfi %d: want id 0-4095, prio 0-7, cfi 0-1", c.VLANID, c.VLANPrio, c.VLANCFI))
	}
	if c.HasTOS && (c.TOS < 0 || c.TOS > 255) {
		add(cfgErr("tos", "%d: want 0-255", c.TOS))
	}
	if c.HasQueueMap && (c.QueueMapMin < 0 || c.QueueMapMax > 65535 || c.QueueMapMin > c.QueueMapMax) {
		add(cfgErr("queue_map", "%d-%d: want 0 <= min <= max <= 65535", c.QueueMapMin, c.QueueMapMax))
	}
	if c.HasNode && (c.Node < 0 || c.Node > 1023) {
		add(cfgErr("node", "%d: want 0-1023", c.Node))
	}
	for _, f := range c.Flags {
		if !slices.Contains(knownFlags, strings.TrimPrefix(f, "!")) {
			add(cfgErr("flag", "%q unknown (valid: %s)", f, strings.Join(knownFlags, ", ")))
		}
	}
	if c.XmitMode != "" && !slices.Contains(XmitModes, c.XmitMode) {
		add(cfgErr("xmit_mode", "%q: want %s", c.XmitMode, enum.Or(XmitModes)))
	}
	if c.XmitMode == XmitQueue && c.Burst > 1 {
		add(cfgErr("burst", "%d with xmit_mode queue_xmit: pktgen refuses bursts through the qdisc", c.Burst))
	}
	if c.XmitMode == XmitNetifReceive && c.CloneSkb > 0 {
		add(cfgErr("clone_skb", "%d with xmit_mode netif_receive: pktgen refuses it", c.CloneSkb))
	}
	return errjoin.Distinct(errs...)
}

// checkCPUs refuses CPUs out of range and CPUs given twice, one error
// for each cause however many threads share it. With Queues a CPU may
// carry several streams (pktgen devices on its one thread), each on its
// own queue.
func (c *Config) checkCPUs() error {
	queued := c.Queues != nil && len(c.Queues) == len(c.CPUs)
	type place struct{ cpu, queue int }
	var bad, twice []int
	var twiceQ []place
	seen, seenQ := map[int]int{}, map[place]int{}
	for i, cpu := range c.CPUs {
		if (cpu < 0 || cpu > 8191) && seen[cpu] == 0 {
			bad = append(bad, cpu)
		}
		if seen[cpu] == 1 {
			twice = append(twice, cpu)
		}
		seen[cpu]++
		if queued {
			p := place{cpu, c.Queues[i]}
			if seenQ[p] == 1 {
				twiceQ = append(twiceQ, p)
			}
			seenQ[p]++
		}
	}
	var errs []error
	if len(bad) > 0 {
		errs = append(errs, cfgErr("cpus", "%s out of range 0-8191", cpuList(bad)))
	}
	switch {
	case len(twice) > 0 && !queued:
		errs = append(errs, cfgErr("cpus", "%s twice: one thread per CPU (%d threads, %d distinct CPUs), unless queues gives each of a CPU's threads its own TX queue",
			cpuList(twice), len(c.CPUs), len(seen)))
	case len(twiceQ) > 0:
		s := make([]string, len(twiceQ))
		for i, p := range twiceQ {
			s[i] = fmt.Sprintf("cpu %d queue %d", p.cpu, p.queue)
		}
		errs = append(errs, cfgErr("queues", "%s twice: the streams on one CPU need a TX queue each", strings.Join(s, ", ")))
	}
	return errors.Join(errs...)
}

// cpuList is "cpu 3" or "cpus 0, 1".
func cpuList(cpus []int) string {
	s := make([]string, len(cpus))
	for i, c := range cpus {
		s[i] = strconv.Itoa(c)
	}
	if len(s) == 1 {
		return "cpu " + s[0]
	}
	return "cpus " + strings.Join(s, ", ")
}

// CheckTestAddr refuses an IPv6 link-local address (fe80::/10) as a
// test frame's source or destination, saying why and what to give: it is
// valid on one link only, with a zone no frame carries.
func CheckTestAddr(a netip.Addr) error {
	if a.Is6() && !a.Is4In6() && a.IsLinkLocalUnicast() {
		return fmt.Errorf("%s is IPv6 link-local (fe80::/10): valid on one link only, with a zone the frames cannot carry; give a global or unique-local address (the benchmarking range is 2001:2::/48)", a)
	}
	return nil
}

func (c *Config) ipv6() bool { return c.DstMin.IsValid() && !c.DstMin.Is4() }

// CountOf is thread i's packet count (0 = until stopped).
func (c *Config) CountOf(i int) uint64 {
	if c.Counts != nil && i < len(c.Counts) {
		return c.Counts[i]
	}
	return c.Count
}

func (c *Config) total() uint64 {
	var t uint64
	for i := range c.CPUs {
		t += c.CountOf(i)
	}
	if len(c.CPUs) == 0 {
		return c.Count
	}
	return t
}

// SplitRate divides pps packets per second over n threads, the
// remainder going to the first threads: 1000 over 3 is 334, 333, 333.
// A thread's share is 0 when pps < n; callers refuse that (Rates does).
func SplitRate(pps uint64, n int) []uint64 { return SplitCount(pps, n) }

// SplitCount divides total packets over n threads, the remainder going to
// the first threads.
func SplitCount(total uint64, n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = total / uint64(n)
		if uint64(i) < total%uint64(n) {
			out[i]++
		}
	}
	return out
}

// EntryName is the pktgen device entry of thread i: "<dev>@<cpu>", or
// with Queues "<dev>@<cpu>q<queue>" (several may share a CPU's thread).
func (c *Config) EntryName(i int) string {
	if c.Queues != nil && i < len(c.Queues) {
		return fmt.Sprintf("%s@%dq%d", c.Device, c.CPUs[i], c.Queues[i])
	}
	return fmt.Sprintf("%s@%d", c.Device, c.CPUs[i])
}

// QueueOf is thread i's TX queue from Queues (ok false: none given).
func (c *Config) QueueOf(i int) (queue int, ok bool) {
	if c.Queues != nil && i < len(c.Queues) {
		return c.Queues[i], true
	}
	return 0, false
}

// ThreadCPUs are the distinct CPUs of the threads, in first-seen order:
// the kpktgend threads a run uses.
func (c *Config) ThreadCPUs() []int {
	var out []int
	for _, cpu := range c.CPUs {
		if !slices.Contains(out, cpu) {
			out = append(out, cpu)
		}
	}
	return out
}

// Dest is one destination: IP address and next-hop MAC.
type Dest struct {
	Addr netip.Addr
	MAC  net.HardwareAddr
}

// ForThread is the config as thread i sends it: with ThreadDst, its own
// destination in DstMin/DstMAC (a copy); otherwise c itself.
func (c *Config) ForThread(i int) *Config {
	if i < 0 || i >= len(c.ThreadDst) {
		return c
	}
	t := *c
	t.DstMin, t.DstMax, t.DstMAC = c.ThreadDst[i].Addr, netip.Addr{}, c.ThreadDst[i].MAC
	return &t
}

// ThreadSource is the source address of thread i when SrcPerThread is set.
func (c *Config) ThreadSource(i int) netip.Addr {
	a := c.SrcMin
	for range i {
		a = a.Next()
	}
	return a
}

// Commands is the ordered list of device-file writes that configure
// thread i's entry, one command per write(2).
func (c *Config) Commands(i int) []string {
	c = c.ForThread(i)
	var cmds []string
	add := func(format string, args ...any) { cmds = append(cmds, fmt.Sprintf(format, args...)) }
	if c.XmitMode != "" && c.XmitMode != XmitStart {
		add("xmit_mode %s", c.XmitMode)
	}
	add("count %d", c.CountOf(i))
	switch {
	case len(c.IMIX) > 0:
		var parts []string
		for _, e := range c.IMIX {
			parts = append(parts, fmt.Sprintf("%d,%d", e.PktSize(), e.Weight))
		}
		add("imix_weights %s", strings.Join(parts, " "))
	case c.MinPktSize != 0:
		add("min_pkt_size %d", c.MinPktSize)
		add("max_pkt_size %d", c.MaxPktSize)
	case c.PktSize != 0:
		add("pkt_size %d", c.PktSize)
	}
	if c.Frags > 0 {
		add("frags %d", c.Frags)
	}
	switch {
	case c.Rates != nil && i < len(c.Rates):
		add("delay %d", c.delayOf(c.Rates[i]))
	case c.RatePPS > 0:
		add("ratep %d", c.RatePPS)
	case c.RateMbps > 0:
		add("rate %d", c.RateMbps)
	default:
		add("delay %d", c.DelayNS)
	}
	if c.ipv6() {
		if c.DstMax.IsValid() && c.DstMax != c.DstMin {
			add("dst6_min %s", c.DstMin)
			add("dst6_max %s", c.DstMax)
		} else {
			add("dst6 %s", c.DstMin)
		}
		if c.SrcMin.IsValid() {
			// pktgen has no IPv6 source range: one address.
			src := c.SrcMin
			if c.SrcPerThread {
				src = c.ThreadSource(i)
			}
			add("src6 %s", src)
		}
	} else {
		dmax := c.DstMax
		if !dmax.IsValid() {
			dmax = c.DstMin
		}
		add("dst_min %s", c.DstMin)
		add("dst_max %s", dmax)
		if c.SrcMin.IsValid() {
			smin, smax := c.SrcMin, c.SrcMax
			if c.SrcPerThread {
				smin = c.ThreadSource(i)
				smax = smin
			} else if !smax.IsValid() {
				smax = smin
			}
			add("src_min %s", smin)
			add("src_max %s", smax)
		}
	}
	if c.DstMAC != nil {
		add("dst_mac %s", c.DstMAC)
	}
	if c.SrcMAC != nil {
		add("src_mac %s", c.SrcMAC)
	}
	portRange := func(name string, lo, hi int) {
		if lo == 0 && hi == 0 {
			return
		}
		if hi == 0 {
			hi = lo
		}
		top := hi
		if hi > lo {
			top = hi + 1 // pktgen's max is exclusive
		}
		add("%s_min %d", name, lo)
		add("%s_max %d", name, top)
	}
	portRange("udp_src", c.UDPSrcMin, c.UDPSrcMax)
	portRange("udp_dst", c.UDPDstMin, c.UDPDstMax)
	if c.Flows > 0 {
		add("flows %d", c.Flows)
		add("flowlen %d", c.FlowLen)
	}
	if c.HasVLAN {
		add("vlan_id %d", c.VLANID)
		add("vlan_p %d", c.VLANPrio)
		add("vlan_cfi %d", c.VLANCFI)
	}
	if c.HasTOS {
		add("tos %02x", c.TOS)
	}
	if c.HasQueueMap {
		add("queue_map_min %d", c.QueueMapMin)
		add("queue_map_max %d", c.QueueMapMax)
	}
	if c.Queues != nil {
		add("queue_map_min %d", c.Queues[i])
		add("queue_map_max %d", c.Queues[i])
	}
	if c.HasNode {
		add("node %d", c.Node)
	}
	for _, f := range c.Flags {
		add("flag %s", f)
	}
	if c.CloneSkb > 0 {
		add("clone_skb %d", c.CloneSkb)
	}
	if c.Burst > 1 {
		add("burst %d", c.Burst)
	}
	return cmds
}

// RateOf is thread i's packets per second: its own of Rates, else
// RatePPS (0: not set in packets per second).
func (c *Config) RateOf(i int) uint64 {
	if c.Rates != nil && i < len(c.Rates) {
		return c.Rates[i]
	}
	return c.RatePPS
}

// delayOf is pktgen's delay (ns between transmit calls, each of Burst
// packets) for pps packets per second, rounded to the nearest ns, at
// least 1: pktgen's own ratep truncates 1e9/pps and ignores the burst.
func (c *Config) delayOf(pps uint64) uint64 {
	if pps == 0 {
		return 0
	}
	per := uint64(max(c.Burst, 1)) * 1e9
	return max((per+pps/2)/pps, 1)
}

// FrameBytes is the mean frame size without FCS that the config sends:
// PktSize, the middle of a size range, or the IMIX's weighted mean; with
// none of them, the smallest frame that carries the header (MinFrame),
// which the userspace backends build then (a run always gives a size).
func (c *Config) FrameBytes() float64 {
	switch {
	case len(c.IMIX) > 0:
		return c.IMIX.FrameBytes()
	case c.MinPktSize != 0:
		return float64(c.MinPktSize+c.MaxPktSize) / 2
	case c.PktSize != 0:
		return float64(c.PktSize)
	}
	return float64(MinFrame(c.ipv6(), c.HasVLAN))
}
