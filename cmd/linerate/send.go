package main

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/linerate/linerate/internal/enum"
	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/pktgen/choose"
	"github.com/linerate/linerate/topology"
	"github.com/linerate/linerate/topology/cpuset"
)

type sendFlags struct {
	iface, dst, dstMAC, src, cpus, backend, root, udpSrc, udpDst, xmitMode string
	frameSize, threads, burst, cloneSkb, vlan                              int
	count, rate                                                            uint64
	duration                                                               time.Duration
	json, noTimestamp, udpCsum, allowFallback                              bool
}

func (a *app) sendCommand() *cobra.Command {
	f := &sendFlags{}
	cmd := &cobra.Command{
		Use:   "send --iface IF --dst IP [--dst-mac MAC] (--count N | --duration D)",
		Short: "Send pktgen traffic from one host: typed, validated, NUMA-aware, with a summary",
		Long: `send runs the kernel's pktgen on one interface, one thread per CPU, or where
pktgen is absent the same frames from XDP live frames (--backend xdp) or
AF_PACKET (--backend afpacket); auto picks in that order and says why. Threads
default to the CPUs that topology plans for the NIC's queues (its NUMA node's
CPUs, queue i on the CPU its IRQ is pinned to by 'linerate irq apply'); each
thread sends from its own source address (--src, then --src+1, ...) so a
receiver can tell the sequence streams apart. --count is the total over all
threads; --rate the total packets per second. --frame-size counts the
Ethernet frame with its FCS, as RFC 2544 does (64 → pktgen pkt_size 60).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.send(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.iface, "iface", "", "interface to send from")
	fl.StringVar(&f.dst, "dst", "", "destination IP address")
	fl.StringVar(&f.dstMAC, "dst-mac", "", "destination MAC (default: from the ARP table)")
	fl.StringVar(&f.src, "src", "", "first source IP (default: the interface's address); thread i uses src+i")
	fl.IntVar(&f.frameSize, "frame-size", 64, "Ethernet frame size including FCS")
	fl.Uint64Var(&f.count, "count", 0, "packets to send in total, split evenly over the threads")
	fl.DurationVar(&f.duration, "duration", 0, "send for this long")
	ppsVar(fl, &f.rate, "rate", "total packets per second, at least 1 per thread, split exactly over the threads (default: as fast as possible)")
	fl.IntVar(&f.threads, "threads", 0, "number of threads (default: one per planned NIC queue)")
	fl.StringVar(&f.cpus, "cpus", "", "CPU list for the threads, e.g. 2-5 (instead of --threads)")
	fl.IntVar(&f.burst, "burst", 1, "packets per xmit call (xmit_more); devices without skb sharing refuse > 1")
	fl.IntVar(&f.cloneSkb, "clone-skb", 0, "send each skb this many extra times (repeats sequence numbers)")
	fl.BoolVar(&f.allowFallback, "allow-fallback", false, "fall back to burst 1 / clone-skb 0 when the device refuses them")
	fl.StringVar(&f.udpSrc, "udp-src", "9", "UDP source port or range A-B (a range spreads flows over RSS queues)")
	fl.StringVar(&f.udpDst, "udp-dst", "9", "UDP destination port or range A-B")
	fl.IntVar(&f.vlan, "vlan", -1, "802.1Q VLAN id (0-4095)")
	fl.StringVar(&f.xmitMode, "xmit-mode", "", "pktgen xmit_mode: "+enum.Or(pktgen.XmitModes)+" (default "+string(pktgen.XmitStart)+")")
	fl.BoolVar(&f.noTimestamp, "no-timestamp", false, "leave the pktgen header's timestamp zero")
	fl.BoolVar(&f.udpCsum, "udp-csum", false, "fill in UDP checksums")
	fl.StringVar(&f.backend, "backend", string(pktgen.BackendAuto), enum.Or(pktgen.BackendNames)+": auto is kernel when "+pktgen.DefaultProcDir+" exists, else userspace, which is xdp, else afpacket")
	fl.StringVar(&f.root, "root", "/", "host root for reading the NIC topology")
	fl.BoolVar(&f.json, "json", false, "print the summary as JSON")
	_ = cmd.MarkFlagRequired("iface")
	_ = cmd.MarkFlagRequired("dst")
	return cmd
}

func (a *app) send(cmd *cobra.Command, f *sendFlags) error {
	backend := pktgen.BackendName(f.backend)
	if err := backend.Check(); err != nil {
		return usagef("--backend %v", err)
	}
	cfg, err := a.sendConfig(f)
	if err != nil {
		return err
	}
	load := func() error { return choose.ModuleLoader{}.Load(cmd.Context()) }
	be, why, err := choose.Backend(backend, cfg.Device, choose.Options{Log: a.log, LoadModule: load})
	if err != nil {
		return err
	}
	a.log.Info("backend "+string(be.Name()), "why", why)
	last := time.Now()
	progress := func(p pktgen.Progress) {
		if time.Since(last) >= time.Second {
			last = time.Now()
			a.log.Info("sending", "packets", p.Packets, "errors", p.Errors, "elapsed", p.Elapsed.Round(time.Millisecond))
		}
	}
	sum, err := be.Run(cmd.Context(), *cfg, progress)
	if err != nil {
		if errors.Is(err, pktgen.ErrConfig) {
			return usageError{err}
		}
		return err
	}
	if f.json {
		return a.writeJSON(sum)
	}
	return writeSummary(a, sum)
}

// sendConfig turns flags into a validated pktgen.Config.
func (a *app) sendConfig(f *sendFlags) (*pktgen.Config, error) {
	dst, err := netip.ParseAddr(f.dst)
	if err != nil {
		return nil, usagef("--dst %q: not an IP address", f.dst)
	}
	if (f.count == 0) == (f.duration == 0) {
		return nil, usagef("give exactly one of --count (total packets) and --duration (e.g. 10s)")
	}
	if f.vlan > 4095 || f.vlan < -1 {
		return nil, usagef("--vlan %d: want a VLAN id 0-4095", f.vlan)
	}
	r, cleanup, err := openHost(f.root)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	hdr := pktgen.HeaderOffset(dst.Is6(), btoi(f.vlan >= 0), 0) + pktgen.HeaderLen + 4
	mtu, err := topology.MTU(r, f.iface)
	if err != nil {
		a.log.Debug("MTU unknown", "error", err)
		mtu = 0
	}
	maxFrame := mtu + 18
	if f.vlan >= 0 {
		maxFrame += 4
	}
	if mtu <= 0 {
		maxFrame = 65535 // MTU unknown: pktgen's own limit
	}
	if f.frameSize < max(64, hdr) || f.frameSize > maxFrame {
		return nil, usagef("--frame-size %d: want %d-%d (Ethernet frame with FCS; %d bytes of headers and the pktgen header, MTU %d)",
			f.frameSize, max(64, hdr), maxFrame, hdr, mtu)
	}
	cpus, queues, err := a.sendCPUs(f, r)
	if err != nil {
		return nil, err
	}
	cfg := &pktgen.Config{
		Device: f.iface, CPUs: cpus, Queues: queues, PktSize: f.frameSize - pktgen.FCSBytes, Duration: f.duration,
		DstMin: dst, Burst: f.burst, CloneSkb: f.cloneSkb, XmitMode: pktgen.XmitMode(f.xmitMode), AllowFallback: f.allowFallback,
		SrcPerThread: true,
	}
	if f.count > 0 {
		if f.count < uint64(len(cpus)) {
			return nil, usagef("--count %d is less than the %d threads", f.count, len(cpus))
		}
		cfg.Counts = pktgen.SplitCount(f.count, len(cpus))
	}
	if f.rate > 0 {
		if f.rate < uint64(len(cpus)) {
			return nil, usagef("--rate %d over %d threads: below 1 pps per thread: want --rate at least %d or fewer threads (--threads, --cpus)", f.rate, len(cpus), len(cpus))
		}
		cfg.Rates = pktgen.SplitRate(f.rate, len(cpus))
	}
	if cfg.SrcMin, err = sourceAddr(f.src, f.iface, dst); err != nil {
		return nil, err
	}
	if cfg.DstMAC, err = destMAC(f.dstMAC, r, dst); err != nil {
		return nil, err
	}
	if cfg.UDPSrcMin, cfg.UDPSrcMax, err = portRange("--udp-src", f.udpSrc); err != nil {
		return nil, err
	}
	if cfg.UDPDstMin, cfg.UDPDstMax, err = portRange("--udp-dst", f.udpDst); err != nil {
		return nil, err
	}
	if f.vlan >= 0 {
		cfg.HasVLAN, cfg.VLANID = true, f.vlan
	}
	if f.noTimestamp {
		cfg.Flags = append(cfg.Flags, "NO_TIMESTAMP")
	}
	if f.udpCsum {
		cfg.Flags = append(cfg.Flags, "UDPCSUM")
	}
	for i := range cfg.CPUs {
		if src := cfg.ThreadSource(i); src == dst {
			return nil, usagef("--src: thread %d would send from %s, the destination itself (thread i sends from --src+i); give --src outside %s..+%d",
				i, src, cfg.SrcMin, len(cfg.CPUs)-1)
		}
	}
	if err := cfg.Validate(); err != nil {
		return nil, usageError{err}
	}
	return cfg, nil
}

// sendCPUs picks the thread CPUs: --cpus as given; else the CPUs topology
// plans for the NIC's queues (with the queue of each); else, for a device
// without IRQs (veth), the first online CPUs. r is the host root.
func (a *app) sendCPUs(f *sendFlags, r topology.Root) (cpus, queues []int, err error) {
	if f.cpus != "" {
		set, err := cpuset.ParseList(f.cpus, 0)
		if err != nil || set.IsEmpty() {
			return nil, nil, usagef("--cpus %q: want a CPU list such as 2-5 or 0,2 (%v)", f.cpus, err)
		}
		if f.threads != 0 && f.threads != set.Len() {
			return nil, nil, usagef("--threads %d and --cpus %s (%d CPUs) disagree: give one of them", f.threads, f.cpus, set.Len())
		}
		return set.CPUs(), nil, nil
	}
	if f.threads < 0 {
		return nil, nil, usagef("--threads %d: want a positive count", f.threads)
	}
	n, err := topology.Inspect(r, f.iface)
	switch {
	case errors.Is(err, topology.ErrNoInterface):
		return nil, nil, usageError{fmt.Errorf("--iface: %w", err)}
	case errors.Is(err, topology.ErrNoDevice):
		set, rerr := topology.OnlineCPUs(r)
		if rerr != nil {
			return nil, nil, rerr
		}
		online := set.CPUs()
		t := max(f.threads, 1)
		if t > len(online) {
			return nil, nil, usagef("--threads %d: only %d CPUs are online", t, len(online))
		}
		a.log.Info("virtual interface: threads on the first online CPUs", "iface", f.iface, "cpus", online[:t])
		return online[:t], nil, nil
	case err != nil:
		return nil, nil, err
	}
	p, err := topology.MakePlan(n, topology.PlanOptions{Threads: f.threads})
	if err != nil {
		return nil, nil, usageError{fmt.Errorf("--threads: %w", err)}
	}
	seen := map[int]bool{}
	for _, as := range p.Assignments {
		if !seen[as.Queue] && !containsInt(cpus, as.CPU) {
			seen[as.Queue] = true
			cpus = append(cpus, as.CPU)
			queues = append(queues, as.Queue)
		}
	}
	if len(cpus) == 0 {
		cpus = p.Candidates[:1]
		a.log.Warn("no queue IRQs found: one thread on the first local CPU", "iface", f.iface, "cpu", cpus[0])
		return cpus, nil, nil
	}
	a.log.Info("threads on the NIC's planned queue CPUs", "iface", f.iface, "numa_node", n.NUMANode, "cpus", cpus, "queues", queues)
	return cpus, queues, nil
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// sourceAddr is --src, or the interface's default source for dst
// (topology.SourceAddr: the first address of dst's family, link-local
// skipped).
func sourceAddr(flag, iface string, dst netip.Addr) (netip.Addr, error) {
	if flag != "" {
		a, err := netip.ParseAddr(flag)
		if err != nil || a.Is4() != dst.Is4() {
			return netip.Addr{}, usagef("--src %q: want an IP address of the same family as --dst %s", flag, dst)
		}
		return a, nil
	}
	if addrs, err := topology.InterfaceAddrs(iface); err == nil {
		if src, ok := topology.SourceAddr(addrs, dst); ok {
			return src, nil
		}
	}
	return netip.Addr{}, usagef("--src: %s has no address of %s's family: give --src (thread i sends from --src+i)", iface, dst)
}

// destMAC is --dst-mac, or dst's entry in the neighbour table below r.
func destMAC(flag string, r topology.Root, dst netip.Addr) (net.HardwareAddr, error) {
	if flag != "" {
		m, err := net.ParseMAC(flag)
		if err != nil || len(m) != 6 {
			return nil, usagef("--dst-mac %q: want an Ethernet address like 02:00:00:00:00:02", flag)
		}
		return m, nil
	}
	if m, err := topology.Neighbour(r, dst); err == nil {
		return m, nil
	}
	return nil, usagef("--dst-mac: %s is not in the ARP table; give --dst-mac (or ping it first)", dst)
}

func portRange(name, s string) (int, int, error) {
	lo, hi, isRange := strings.Cut(s, "-")
	a, err1 := strconv.Atoi(lo)
	b := a
	var err2 error
	if isRange {
		b, err2 = strconv.Atoi(hi)
	}
	if err1 != nil || err2 != nil || a < 0 || b > 65534 || a > b {
		return 0, 0, usagef("%s %q: want a port or a range A-B within 0-65534", name, s)
	}
	return a, b, nil
}

func writeSummary(a *app, s *pktgen.Summary) error {
	secs := float64(s.USec) / 1e6
	fmt.Fprintf(a.stdout, "%s backend, %s, %d threads: sent %d packets, %d errors in %.3f s\n", s.Backend, s.Device, len(s.Threads), s.Packets, s.Errors, secs)
	fmt.Fprintf(a.stdout, "%.0f pps, L2 %.3f Mb/s, L1 %.3f Mb/s (frames of %.0f bytes + FCS)\n", s.PPS, s.L2BPS/1e6, s.L1BPS/1e6, s.FrameBytes)
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CPU\tQUEUE\tENTRY\tSRC\tPACKETS\tERRORS\tUSEC\tPPS\t")
	for _, t := range s.Threads {
		queue := "-"
		if t.Queue != nil {
			queue = strconv.Itoa(*t.Queue)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%d\t%d\t%.0f\t\n", t.CPU, queue, t.Entry, t.Src, t.Packets, t.Errors, t.USec, t.PPS)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, w := range s.Warnings {
		fmt.Fprintf(a.stdout, "warning: %s\n", w)
	}
	if s.Interrupted {
		fmt.Fprintln(a.stdout, "interrupted: pktgen was stopped early")
	}
	return nil
}
