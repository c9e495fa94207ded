package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/linerate/linerate/internal/enum"
	"github.com/linerate/linerate/latency"
	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/receiver"
	"github.com/linerate/linerate/topology/cpuset"
)

type recvFlags struct {
	iface                          string
	method                         receiver.Method
	duration, untilIdle            time.Duration
	repeats, seqStride, maxStreams int
	window, seqCapacity            uint64
	pass, json                     bool
	latency                        receiver.LatencyMode
	clock                          latency.Clock
	clockError                     time.Duration
	needWakeup                     pktgen.NeedWakeup
	cpus                           string
}

func (a *app) recvCommand() *cobra.Command {
	f := &recvFlags{}
	cmd := &cobra.Command{
		Use:   "recv --iface IF [--duration D | --until-idle 2s] [--method " + enum.Usage(receiver.Methods) + "]",
		Short: "Count the pktgen traffic arriving on one interface, per stream, exactly",
		Long: `recv counts every packet that carries the pktgen header on one interface,
per stream (source, destination, UDP destination port): received, highest
sequence, duplicates, reordered, missing and the first missing ranges, plus
the interface's counters over the run. Packets without the header (ARP, ND,
anything else) are counted apart and always reach the network stack.

--method xdp counts in an XDP program (native mode where the driver has it,
else generic) and drops the test packets after counting unless --pass;
afpacket reads TPACKET_V3 rings, one per CPU, and only taps; afxdp opens an
AF_XDP socket on every receive queue (zero-copy where the driver has it,
else copy), read by a thread per queue on --cpus, and an XDP program that
redirects the test packets to them and passes everything else; auto
(default) uses XDP and falls back to AF_PACKET, saying why (never afxdp:
it needs XDP too, and copies every frame to count it). It stops after --duration,
after --until-idle without new test packets (once one has arrived), or on
Ctrl-C / SIGTERM / SIGHUP, and always detaches what it attached.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.recv(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.iface, "iface", "", "interface to count on")
	fl.StringVar((*string)(&f.method), "method", string(receiver.MethodAuto), enum.Or(receiver.Methods))
	fl.DurationVar(&f.duration, "duration", 0, "stop after this long")
	fl.DurationVar(&f.untilIdle, "until-idle", 0, "stop after this long without new test packets (once one has arrived)")
	fl.BoolVar(&f.pass, "pass", false, "XDP: let test packets continue to the network stack instead of dropping them")
	fl.IntVar(&f.repeats, "repeats", 1, "copies of each sequence the sender sends (kernel pktgen: clone_skb × burst): not duplicates")
	fl.IntVar(&f.seqStride, "seq-stride", 1, "how far the sender's sequence advances from one built frame to the next, a power of two (kernel pktgen numbers every frame it sends: with copies, give --repeats and --seq-stride both the copies)")
	fl.Uint64Var(&f.window, "window", 0, fmt.Sprintf("sequences per stream tracked one by one, a power of two from %d to %d (default %d, or %d with --repeats > 1); memory is --max-streams × window/4 bytes whatever the run's length, and a packet older than the window is counted late", receiver.MinWindow, receiver.MaxWindow, receiver.DefaultWindow, receiver.DefaultRepeatWindow))
	fl.Uint64Var(&f.seqCapacity, "seq-capacity", 0, "replaced by --window")
	_ = fl.MarkHidden("seq-capacity")
	fl.IntVar(&f.maxStreams, "max-streams", receiver.DefaultMaxStreams, "streams counted; packets of further streams are counted only in overflow_packets")
	fl.StringVar((*string)(&f.latency), "latency", string(receiver.LatencyOneWay), "time every test packet (its arrival less the send time in its header): "+enum.Or(receiver.LatencyModes))
	fl.StringVar((*string)(&f.clock), "clock", string(latency.Unsynchronised), "what the senders' clocks are to this host's, as you know it, which the delays are reported on: "+enum.Or(latency.Clocks)+" (same-host: sent from this host, namespaces included)")
	fl.DurationVar(&f.clockError, "clock-error", 0, "the bound of --clock synchronised or estimated, reported with the delays")
	fl.BoolVar(&f.json, "json", false, "print the report as JSON")
	fl.StringVar((*string)(&f.needWakeup), "need-wakeup", string(pktgen.NeedWakeupAuto), "afxdp: bind the sockets with need_wakeup (poll() only when the fill ring asks): "+enum.Or(pktgen.NeedWakeups)+"; auto is on for a physical NIC, off for a virtual device")
	fl.StringVar(&f.cpus, "cpus", "", "afxdp: the CPUs of the queues' readers, queue q's the q-th (cycling), e.g. 2-5 (default: the CPUs this process may use)")
	_ = cmd.MarkFlagRequired("iface")
	return cmd
}

// recvNames are how the flags name a receiver's inputs in its errors.
var recvNames = receiver.Names{
	Iface: "--iface", Method: "--method", Repeats: "--repeats", SeqStride: "--seq-stride", Window: "--window", MaxStreams: "--max-streams",
	Duration: "--duration", UntilIdle: "--until-idle", Latency: "--latency", Clock: "--clock", NeedWakeup: "--need-wakeup",
}

func (a *app) recv(cmd *cobra.Command, f *recvFlags) error {
	if cmd.Flags().Changed("seq-capacity") {
		return usagef("--seq-capacity was replaced by --window: the receiver keeps a sliding window of sequences per stream, whatever the run's length")
	}
	o := receiver.Options{
		Iface: f.iface, Method: f.method, Pass: f.pass, Repeats: f.repeats, SeqStride: f.seqStride,
		Window: f.window, MaxStreams: f.maxStreams, Logger: a.log.Named("recv"), Names: recvNames,
		Latency: f.latency, Clock: f.clock, ClockErrorUs: float64(f.clockError) / float64(time.Microsecond),
		NeedWakeup: f.needWakeup,
	}
	if f.cpus != "" {
		set, err := cpuset.ParseList(f.cpus, 0)
		if err != nil || set.IsEmpty() {
			return usagef("--cpus %q: want a CPU list such as 2-5 or 0,2 (%v)", f.cpus, err)
		}
		o.CPUs = set.CPUs()
	}
	progress := func(p receiver.Progress) {
		a.log.Info("receiving", "test_packets", p.TestPackets, "elapsed", p.Elapsed.Round(time.Millisecond))
	}
	rep, err := receiver.Count(cmd.Context(), o, receiver.Until{Duration: f.duration, Idle: f.untilIdle}, progress)
	if errors.Is(err, receiver.ErrOptions) || errors.Is(err, receiver.ErrNoInterface) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	if f.json {
		return a.writeJSON(rep)
	}
	return rep.WriteTable(a.stdout)
}
