package main

import (
	"errors"
	"net"
	"net/netip"
	"time"

	"github.com/spf13/cobra"

	"github.com/linerate/linerate/agent"
	"github.com/linerate/linerate/internal/enum"
	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/pktgen/choose"
	"github.com/linerate/linerate/topology/cpuset"
)

type sendFlags struct {
	iface, dst, dstMAC, src, cpus, backend, root, udpSrc, udpDst, xmitMode, needWakeup string
	frameSize, threads, burst, cloneSkb, vlan                                          int
	count, rate                                                                        uint64
	duration                                                                           time.Duration
	json, noTimestamp, udpCsum, allowFallback                                          bool
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
	fl.IntVar(&f.cloneSkb, "clone-skb", 0, "send each built frame this many times (0 and 1: once; the receiver counts them with --repeats and --seq-stride of clone_skb × burst)")
	fl.BoolVar(&f.allowFallback, "allow-fallback", false, "fall back to burst 1 / clone-skb 0 when the device refuses them")
	fl.StringVar(&f.udpSrc, "udp-src", "9", "UDP source port or range A-B (a range spreads flows over RSS queues)")
	fl.StringVar(&f.udpDst, "udp-dst", "9", "UDP destination port or range A-B")
	fl.IntVar(&f.vlan, "vlan", -1, "802.1Q VLAN id (0-4095)")
	fl.StringVar(&f.xmitMode, "xmit-mode", "", "pktgen xmit_mode: "+enum.Or(pktgen.XmitModes)+" (default "+string(pktgen.XmitStart)+")")
	fl.StringVar(&f.needWakeup, "need-wakeup", string(pktgen.NeedWakeupAuto), "with --backend afxdp, need_wakeup: "+enum.Or(pktgen.NeedWakeups)+" (auto: on for a physical NIC, off for a virtual device)")
	fl.BoolVar(&f.noTimestamp, "no-timestamp", false, "leave the pktgen header's timestamp zero")
	fl.BoolVar(&f.udpCsum, "udp-csum", false, "fill in UDP checksums")
	fl.StringVar(&f.backend, "backend", string(pktgen.BackendAuto), enum.Or(pktgen.BackendNames)+": auto is kernel when "+pktgen.DefaultProcDir+" exists, else userspace, which is xdp, else afxdp, else afpacket")
	fl.StringVar(&f.root, "root", "/", "host root for reading the NIC topology")
	fl.BoolVar(&f.json, "json", false, "print the summary as JSON")
	_ = cmd.MarkFlagRequired("iface")
	_ = cmd.MarkFlagRequired("dst")
	return cmd
}

// sendNames are how the flags name a send's inputs in its errors.
var sendNames = agent.SendNames{
	Device: "--iface", Src: "--src", DstMAC: "--dst-mac", Backend: "--backend",
	FrameSize: "--frame-size", FrameWithFCS: true,
	Count: "--count", Rate: "--rate", Threads: "--threads", CPUs: "--cpus",
}

func (a *app) send(cmd *cobra.Command, f *sendFlags) error {
	backend := pktgen.BackendName(f.backend)
	if err := backend.Check(); err != nil {
		return usagef("--backend %v", err)
	}
	wakeup := pktgen.NeedWakeup(f.needWakeup)
	if err := wakeup.CheckFor(backend == pktgen.BackendAFXDP, "--backend "+string(backend)); err != nil {
		return usagef("--need-wakeup %v", err)
	}
	cfg, err := a.sendConfig(f)
	if err != nil {
		return err
	}
	cfg.NeedWakeup = wakeup
	load := func() error { return choose.ModuleLoader{}.Load(cmd.Context()) }
	be, why, err := agent.LocalSend{Names: sendNames, Log: a.log}.Backend(cfg, backend, load)
	if err != nil {
		return sendError(err)
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
	return sum.WriteTable(a.stdout)
}

// sendConfig turns flags into a validated pktgen.Config, composed on the
// host --root names as the agent composes a send (agent.LocalSend).
func (a *app) sendConfig(f *sendFlags) (*pktgen.Config, error) {
	dst, err := netip.ParseAddr(f.dst)
	if err != nil {
		return nil, usagef("--dst %q: not an IP address", f.dst)
	}
	if err := pktgen.CheckTestAddr(dst); err != nil {
		return nil, usagef("--dst %v", err)
	}
	if (f.count == 0) == (f.duration == 0) {
		return nil, usagef("give exactly one of --count (total packets) and --duration (e.g. 10s)")
	}
	if f.vlan > 4095 || f.vlan < -1 {
		return nil, usagef("--vlan %d: want a VLAN id 0-4095", f.vlan)
	}
	cpus, err := sendCPUs(f)
	if err != nil {
		return nil, err
	}
	cfg := pktgen.Config{
		Device: f.iface, CPUs: cpus, PktSize: f.frameSize - pktgen.FCSBytes, Duration: f.duration,
		DstMin: dst, Burst: f.burst, CloneSkb: f.cloneSkb, XmitMode: pktgen.XmitMode(f.xmitMode), AllowFallback: f.allowFallback,
		SrcPerThread: true,
	}
	if f.src != "" {
		if cfg.SrcMin, err = netip.ParseAddr(f.src); err != nil || cfg.SrcMin.Is4() != dst.Is4() {
			return nil, usagef("--src %q: want an IP address of the same family as --dst %s", f.src, dst)
		}
		if err := pktgen.CheckTestAddr(cfg.SrcMin); err != nil {
			return nil, usagef("--src %v", err)
		}
	}
	if f.dstMAC != "" {
		if cfg.DstMAC, err = net.ParseMAC(f.dstMAC); err != nil || len(cfg.DstMAC) != 6 {
			return nil, usagef("--dst-mac %q: want an Ethernet address like 02:00:00:00:00:02", f.dstMAC)
		}
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
	r, cleanup, err := openHost(f.root)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	out, err := agent.LocalSend{Root: r, Config: cfg, Threads: f.threads, Count: f.count, Rate: f.rate, Names: sendNames, Log: a.log}.Compose()
	if err != nil {
		return nil, sendError(err)
	}
	return out, nil
}

// sendCPUs are the thread CPUs --cpus gives (none: the host's, see
// agent.LocalSend), checked against --threads.
func sendCPUs(f *sendFlags) ([]int, error) {
	if f.cpus == "" {
		if f.threads < 0 {
			return nil, usagef("--threads %d: want a positive count", f.threads)
		}
		return nil, nil
	}
	set, err := cpuset.ParseList(f.cpus, 0)
	if err != nil || set.IsEmpty() {
		return nil, usagef("--cpus %q: want a CPU list such as 2-5 or 0,2 (%v)", f.cpus, err)
	}
	if f.threads != 0 && f.threads != set.Len() {
		return nil, usagef("--threads %d and --cpus %s (%d CPUs) disagree: give one of them", f.threads, f.cpus, set.Len())
	}
	return set.CPUs(), nil
}

// sendError makes a send's invalid input (agent.ErrInvalid: a flag, named
// in the message) a usage error; the host's failures stay failures.
func sendError(err error) error {
	if errors.Is(err, agent.ErrInvalid) {
		return usageError{err}
	}
	return err
}

func portRange(name, s string) (int, int, error) { return numRange(name, s, "port", 65534) }

// numRange parses flag name's "A" or "A-B", 0 <= A <= B <= top; what
// names one number in the error ("port", "queue").
func numRange(name, s, what string, top int) (int, int, error) {
	a, b, ok := pktgen.ParseRange(s)
	if !ok || a < 0 || b > top || a > b {
		return 0, 0, usagef("%s %q: want a %s or a range A-B within 0-%d", name, s, what, top)
	}
	return a, b, nil
}
