//go:build linux

package receiver

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/features"
	"golang.org/x/sys/unix"

	"github.com/linerate/linerate/latency"
)

// bpfClock is the clock the XDP program times arrivals on, and how Go
// turns it into Unix time: the program adds the one u64 of the clock map
// to what helper returns. There is no BPF helper for CLOCK_REALTIME.
type bpfClock struct {
	name, why string
	helper    asm.BuiltinFunc
	// offset is what to add to the helper's time for Unix ns, now.
	offset func() (int64, error)
	// every is how often offset is written again.
	every time.Duration
}

// chooseBPFClock takes bpf_ktime_get_tai_ns where the kernel has it
// (6.1+): TAI is CLOCK_REALTIME plus the kernel's TAI offset (adjtimex;
// 0 unless a time daemon set it), so it follows every step and slew of
// the realtime clock and the offset changes only with a leap second.
// Else bpf_ktime_get_ns, CLOCK_MONOTONIC, whose distance to realtime Go
// writes every 100 ms (a slewing daemon moves it at most 50 µs in that
// time, at its 500 ppm limit).
func chooseBPFClock() bpfClock {
	err := features.HaveProgramHelper(ebpf.XDP, asm.FnKtimeGetTaiNs)
	if err == nil {
		return taiClock
	}
	c := monoClock
	c.why = fmt.Sprintf("%s (no bpf_ktime_get_tai_ns: %v)", c.why, err)
	return c
}

// The two clocks chooseBPFClock chooses from.
var (
	taiClock  = bpfClock{name: "CLOCK_TAI", why: "bpf_ktime_get_tai_ns less the kernel's TAI offset", helper: asm.FnKtimeGetTaiNs, offset: taiToRealtime, every: time.Second}
	monoClock = bpfClock{name: "CLOCK_MONOTONIC", why: "bpf_ktime_get_ns plus realtime less monotonic, written every 100 ms",
		helper: asm.FnKtimeGetNs, offset: func() (int64, error) { return monoToRealtime(), nil }, every: 100 * time.Millisecond}
	// bpfClocks is chooseBPFClock; tests take each clock in turn.
	bpfClocks = chooseBPFClock
)

// taiToRealtime is minus the kernel's TAI offset, in ns.
func taiToRealtime() (int64, error) {
	var tx unix.Timex
	if _, err := unix.Adjtimex(&tx); err != nil {
		return 0, fmt.Errorf("read the kernel's TAI offset (adjtimex): %w", err)
	}
	return -int64(tx.Tai) * 1e9, nil
}

// setClock writes the clock map's offset.
func (x *xdpMethod) setClock() error {
	off, err := x.clk.offset()
	if err != nil {
		return fmt.Errorf("xdp: %w", err)
	}
	if err := x.clock.Update(uint32(0), uint64(off), ebpf.UpdateAny); err != nil {
		return fmt.Errorf("xdp: write the clock offset: %w", err)
	}
	return nil
}

// startClock keeps the clock map's offset current until close.
func (x *xdpMethod) startClock() {
	if x.clock == nil {
		return
	}
	x.clockDone, x.clockKept = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(x.clockKept)
		t := time.NewTicker(x.clk.every)
		defer t.Stop()
		for {
			select {
			case <-x.clockDone:
				return
			case <-t.C:
				if err := x.setClock(); err != nil {
					x.o.Logger.Warn("delays may drift: the clock offset was not written", "error", err)
				}
			}
		}
	}()
}

// latValue is one CPU's latency state of a slot, as the program keeps it
// (latLast and the rest).
type latValue struct {
	Last                                         int64
	J16, JN, Sum, Min, Max, Neg, Absurd, InRange uint64
	Corr                                         int64
	Counts                                       [latency.Buckets]uint64
}

// setCorrections fills the corrections map: each UDP destination port,
// in network order as the stream key holds it, to its correction in µs.
func (x *xdpMethod) setCorrections() error {
	for port, c := range x.o.ClockCorrections {
		k := binary.BigEndian.AppendUint16(nil, port)
		if err := x.corr.Update(k, c.Microseconds(), ebpf.UpdateAny); err != nil {
			return fmt.Errorf("xdp: write the clock correction of port %d: %w", port, err)
		}
	}
	return nil
}

// slotLatency merges the CPUs' latency state of slot (nil: latency off).
func (x *xdpMethod) slotLatency(slot uint32) (*latency.Latency, error) {
	if x.lat == nil {
		return nil, nil
	}
	var per []latValue
	if err := x.lat.Lookup(slot, &per); err != nil {
		return nil, fmt.Errorf("xdp: read the per-CPU delays of slot %d: %w", slot, err)
	}
	l := &latency.Latency{Clock: x.o.Clock, ClockErrorUs: x.o.ClockErrorUs}
	for _, v := range per {
		h := latency.Histogram{Counts: v.Counts, Negative: v.Neg, Absurd: v.Absurd, SumUs: v.Sum, MinUs: v.Min, MaxUs: v.Max, Jitter16: v.J16, JitterN: v.JN}
		l.Add(&h)
	}
	return l, nil
}
