package agent

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/linerate/linerate/doctor"
	"github.com/linerate/linerate/latency"
	"github.com/linerate/linerate/pktgen"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
	"github.com/linerate/linerate/receiver"
	"github.com/linerate/linerate/topology/cpuset"
)

// This file bounds every request before any handler sees it: each number
// and list of a request against a stated limit, CPU numbers against the
// host's CPUs, and a send's length (given or derived from its count and
// rate) against the agent's maximum run length. What a field means is
// checked further on (pktgen.Config.Validate, the receiver's options, the
// safety rails); here only that it is in range, so that nothing a request
// asks for can crash the agent or make it allocate without bound.

// Limits of the requests' fields.
const (
	// maxCPU is the highest CPU number a request may name when the host's
	// online CPUs cannot be read: pktgen's own range (0-8191).
	maxCPU = 8191
	// maxThreads bounds per-thread lists (cpus, counts, rates_pps, queues,
	// thread_dst) and exclude_cpus: a pktgen thread per CPU of the largest
	// host pktgen supports (8,192 CPUs); a list beyond it cannot be valid.
	maxThreads = maxCPU + 1
	// maxRatePPS is the highest per-thread rate: above the line rate of
	// any port (400 GbE at 64-byte frames is 595 Mpps for the whole port).
	maxRatePPS = 1_000_000_000
	// maxDelayNS is the longest pause between transmit calls, 1,000 s: a
	// slower send measures nothing (and its derived length is bounded by
	// the maximum run length anyway).
	maxDelayNS = 1_000 * uint64(time.Second)
	// maxFlags bounds a send's pktgen flags: pktgen has about 20.
	maxFlags = 64
	// maxIfaceName is IFNAMSIZ-1, the longest interface name Linux has.
	maxIfaceName = 15
	// maxWatchInterval is the longest Watch interval: a sample an hour is
	// already too rare to watch anything; shorter ones than
	// minWatchInterval are raised to it.
	maxWatchInterval = time.Hour
	// maxAddrs bounds a request's test addresses (a Describe's, a Tune's):
	// a run's receivers and senders, 1,024 hosts and more than any run
	// the coordinator drives.
	maxAddrs = 1024
	// maxFrameSize bounds a Describe's frame size: the largest jumbo
	// frame a NIC takes (the checks compare it with the MTU).
	maxFrameSize = 65535
	// maxOptionName bounds a Describe's named options (role, irqbalance,
	// backend, method): the longest valid one is a dozen bytes, so a
	// longer one is refused before it is quoted back in an error.
	maxOptionName = 64
)

// DefaultMaxRunLength is the longest send an agent accepts when
// Config.MaxRunLength is 0 (`linerate agent --max-run`): its duration, or
// the length its per-thread count and rate derive (count 1e10 at 1 pps is
// 317 years), whichever ends it first.
const DefaultMaxRunLength = 24 * time.Hour

// requestBounds checks requests against the host's CPUs and the agent's
// maximum run length.
type requestBounds struct {
	// cpus are the host's online CPUs (empty: unknown, 0-maxCPU is
	// allowed).
	cpus   func() cpuset.Set
	maxRun time.Duration
}

// check refuses a request with a field out of range (ErrInvalid naming the
// field, its value and what is valid); nil for a request type without
// bounded fields.
func (b requestBounds) check(req any) error {
	switch r := req.(type) {
	case *lineratev1.DescribeRequest:
		return b.describe(r)
	case *lineratev1.TuneRequest:
		return b.tune(r)
	case *lineratev1.ArmRequest:
		return b.arm(r)
	case *lineratev1.ConfigureRequest:
		if r.Rtt != nil && (r.Rtt.RatePps < 1 || r.Rtt.RatePps > latency.MaxRTTRate) {
			return failf(ErrInvalid, "rtt.rate_pps %d: want 1 to %d packets a second", r.Rtt.RatePps, latency.MaxRTTRate)
		}
		return b.configure(r.Config)
	case *lineratev1.WatchRequest:
		return b.watch(r)
	case *lineratev1.AcquireLeaseRequest:
		return nonNegative("ttl", r.Ttl)
	case *lineratev1.RenewLeaseRequest:
		return nonNegative("ttl", r.Ttl)
	}
	return nil
}

func (b requestBounds) tune(r *lineratev1.TuneRequest) error {
	n := b.cpus().Len()
	if n == 0 {
		n = maxThreads
	}
	if r.Threads < 0 || int(r.Threads) > n {
		return failf(ErrInvalid, "threads %d: want 0 (every queue) to %d (the host's CPUs)", r.Threads, n)
	}
	if len(r.Addrs) > maxAddrs {
		return failf(ErrInvalid, "addrs: %d addresses, at most %d", len(r.Addrs), maxAddrs)
	}
	if len(r.FixClasses) > len(doctor.FixClasses) {
		return failf(ErrInvalid, "fix_classes: %d classes, there are %d", len(r.FixClasses), len(doctor.FixClasses))
	}
	if err := b.cpuList("fix_cpus", r.FixCpus); err != nil {
		return err
	}
	return b.cpuList("exclude_cpus", r.ExcludeCpus)
}

// describe bounds what a Describe asks the host's checks to be for.
func (b requestBounds) describe(r *lineratev1.DescribeRequest) error {
	switch {
	case r.FrameSize < 0 || r.FrameSize > maxFrameSize:
		return failf(ErrInvalid, "frame_size %d: want 0 (not checked) to %d bytes", r.FrameSize, maxFrameSize)
	case len(r.Addrs) > maxAddrs:
		return failf(ErrInvalid, "addrs: %d addresses, at most %d", len(r.Addrs), maxAddrs)
	}
	for _, f := range []struct{ field, value string }{{"role", r.Role}, {"irqbalance", r.Irqbalance}, {"backend", r.Backend}, {"method", r.Method}} {
		if len(f.value) > maxOptionName {
			return failf(ErrInvalid, "%s: %d bytes, at most %d", f.field, len(f.value), maxOptionName)
		}
	}
	return b.cpuList("cpus", r.Cpus)
}

// cpuList refuses a list of CPUs longer than maxThreads or naming a CPU
// the host does not have.
func (b requestBounds) cpuList(field string, cpus []int32) error {
	if len(cpus) > maxThreads {
		return failf(ErrInvalid, "%s: %d CPUs, at most %d", field, len(cpus), maxThreads)
	}
	host := b.cpus()
	for i, c := range cpus {
		switch {
		case host.IsEmpty() && (c < 0 || c > maxCPU):
			return failf(ErrInvalid, "%s[%d] %d: not a CPU, valid CPUs are 0-%d", field, i, c, maxCPU)
		case !host.IsEmpty() && (c < 0 || !host.Contains(int(c))):
			return failf(ErrInvalid, "%s[%d] %d: not a CPU of this host, valid CPUs are %s", field, i, c, host)
		}
	}
	return nil
}

func (b requestBounds) arm(r *lineratev1.ArmRequest) error {
	switch {
	case len(r.Iface) > maxIfaceName:
		return failf(ErrInvalid, "iface %q: longer than an interface name (%d characters)", r.Iface, maxIfaceName)
	case r.Repeats > receiver.MaxRepeats:
		return failf(ErrInvalid, "repeats %d: want 0 (1) to %d", r.Repeats, receiver.MaxRepeats)
	case r.SeqStride > receiver.MaxRepeats:
		return failf(ErrInvalid, "seq_stride %d: want 0 (1) or a power of two up to %d", r.SeqStride, receiver.MaxRepeats)
	case r.MaxStreams > receiver.MaxStreamsLimit:
		return failf(ErrInvalid, "max_streams %d: want 0 (the default, %d) to %d", r.MaxStreams, receiver.DefaultMaxStreams, receiver.MaxStreamsLimit)
	case r.MaxRanges > receiver.MaxRangesLimit:
		return failf(ErrInvalid, "max_ranges %d: want 0 (the default, %d) to %d", r.MaxRanges, receiver.DefaultMaxRanges, receiver.MaxRangesLimit)
	case r.Window != 0 && !receiver.ValidWindow(r.Window):
		return failf(ErrInvalid, "window %d: want 0 (the default) or a power of two from %d to %d", r.Window, receiver.MinWindow, receiver.MaxWindow)
	case len(r.ReflectPorts) > receiver.MaxReflectPorts:
		return failf(ErrInvalid, "reflect_ports: %d ports, at most %d", len(r.ReflectPorts), receiver.MaxReflectPorts)
	case r.ReflectVlan > 4094:
		return failf(ErrInvalid, "reflect_vlan %d: want a VLAN id, 1 to 4094 (0: untagged)", r.ReflectVlan)
	}
	return nil // seq_capacity is ignored: it allocates nothing
}

func (b requestBounds) configure(c *lineratev1.SenderConfig) error {
	if c == nil {
		return nil // "config: missing" is the decoder's
	}
	if err := b.cpuList("config.cpus", c.Cpus); err != nil {
		return err
	}
	for _, l := range []struct {
		field string
		n     int
	}{{"counts", len(c.Counts)}, {"rates_pps", len(c.RatesPps)}, {"queues", len(c.Queues)}, {"thread_dst", len(c.ThreadDst)}} {
		if l.n > maxThreads {
			return failf(ErrInvalid, "config.%s: %d entries, at most %d (one per thread)", l.field, l.n, maxThreads)
		}
	}
	if c.RatePps > maxRatePPS {
		return failf(ErrInvalid, "config.rate_pps %d: at most %d per thread", c.RatePps, uint64(maxRatePPS))
	}
	for i, r := range c.RatesPps {
		if r > maxRatePPS {
			return failf(ErrInvalid, "config.rates_pps[%d] %d: at most %d per thread", i, r, uint64(maxRatePPS))
		}
	}
	if c.DelayNs > maxDelayNS {
		return failf(ErrInvalid, "config.delay_ns %d: at most %d (%s)", c.DelayNs, maxDelayNS, time.Duration(maxDelayNS))
	}
	if len(c.Flags) > maxFlags {
		return failf(ErrInvalid, "config.flags: %d flags, at most %d", len(c.Flags), maxFlags)
	}
	if len(c.Imix) > pktgen.MaxIMIX {
		return failf(ErrInvalid, "config.imix: %d entries, pktgen takes at most %d", len(c.Imix), pktgen.MaxIMIX)
	}
	if len(c.Device) > maxIfaceName {
		return failf(ErrInvalid, "config.device %q: longer than an interface name (%d characters)", c.Device, maxIfaceName)
	}
	if err := nonNegative("config.duration", c.Duration); err != nil {
		return err
	}
	if c.Duration != nil && c.Duration.AsDuration() > b.maxRun {
		return failf(ErrInvalid, "config.duration %s: longer than the agent's maximum run length %s (--max-run)", c.Duration.AsDuration(), b.maxRun)
	}
	return b.runLength(c)
}

// runLength refuses a count-based send whose count and rate derive a run
// longer than the maximum run length (pktgen.Config.SlowestThread, the
// rule a send's deadline takes its length from; an unpaced send's length
// cannot be derived), unless a duration ends it sooner.
func (b requestBounds) runLength(c *lineratev1.SenderConfig) error {
	if c.Duration != nil && c.Duration.AsDuration() > 0 {
		return nil // the duration (checked above) ends it first
	}
	cfg, err := decodeSenderConfig(c)
	if err != nil {
		return nil // the handler's decoder refuses it, naming the field
	}
	s, ok := cfg.SlowestThread(0)
	if !ok || s.Secs <= b.maxRun.Seconds() {
		return nil
	}
	return failf(ErrInvalid, "config.count %d at config.rate %s pps (thread %d) would send for %s, longer than the agent's maximum run length %s (--max-run): a lower count, a higher rate or a duration",
		s.Count, pktgen.PPSText(s.PPS), s.Thread, lengthString(s.Secs), b.maxRun)
}

// lengthString is secs as a reader takes it in: in years beyond a year.
func lengthString(secs float64) string {
	const year = 365 * 24 * 3600
	if secs >= year {
		return fmt.Sprintf("%.0f years", secs/year)
	}
	return time.Duration(secs * float64(time.Second)).Round(time.Second).String()
}

func (b requestBounds) watch(r *lineratev1.WatchRequest) error {
	if err := nonNegative("interval", r.Interval); err != nil {
		return err
	}
	if r.Interval != nil && r.Interval.AsDuration() > maxWatchInterval {
		return failf(ErrInvalid, "interval %s: at most %s", r.Interval.AsDuration(), maxWatchInterval)
	}
	return nil
}

// nonNegative refuses a duration that is invalid or negative.
func nonNegative(field string, d *durationpb.Duration) error {
	if d == nil {
		return nil
	}
	if err := d.CheckValid(); err != nil {
		return failf(ErrInvalid, "%s: %v", field, err)
	}
	if d.AsDuration() < 0 {
		return failf(ErrInvalid, "%s %s: negative", field, d.AsDuration())
	}
	return nil
}

// unaryBounds refuses a unary request out of bounds before its handler.
func (b requestBounds) unary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if err := b.check(req); err != nil {
		return nil, toStatus(err)
	}
	return handler(ctx, req)
}

// stream refuses a streaming call's requests out of bounds as the
// handler receives them.
func (b requestBounds) stream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	return handler(srv, &boundedStream{ServerStream: ss, b: b})
}

type boundedStream struct {
	grpc.ServerStream
	b requestBounds
}

func (s *boundedStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	return toStatus(s.b.check(m))
}
