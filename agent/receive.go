package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/linerate/linerate/receiver"
)

// counter is a started receiver (receiver.Receiver; a fake in tests).
type counter interface {
	Method() (method receiver.Method, reason string)
	XDPMode() string
	Snapshot() receiver.Report
	Stop() (*receiver.Report, error)
	Close() error
}

// startReceiver starts counting with o: receiver.Start.
func startReceiver(ctx context.Context, o receiver.Options) (counter, error) {
	rx, err := receiver.Start(ctx, o)
	if err != nil {
		return nil, err
	}
	return rx, nil
}

// armed is the receiver while it counts.
type armed struct {
	rx      counter
	cancel  context.CancelFunc
	at      time.Time
	counted uint64   // test packets the metrics counted so far (under receiving.op)
	irqs    *irqSpan // the queue IRQs' counts at Arm
	// ending is set (under receiving.mu) once a collect or disarm stops
	// it: watchers then show last rather than wait for the stop.
	ending bool
	last   receiver.Report // the last snapshot a watcher read (under receiving.mu)
}

// receiving is the receiver's lifecycle: arm, collect (keeping it armed or
// not), disarm.
//
// Two locks: op serialises the lifecycle, whose steps may take seconds
// (an XDP program load, the final scans of the sequence bitmaps); mu only
// guards armed and is never held across them, so that a watch sample (and
// whatever else reads the state) answers during an Arm or a Collect.
type receiving struct {
	base    context.Context // ends every receiver at shutdown
	iface   string          // the default interface
	thread  nsThread
	log     hclog.Logger
	metrics *metrics
	changes *changes
	irqs    *irqVerifier
	// start starts a receiver (nil: startReceiver; tests replace it).
	start func(context.Context, receiver.Options) (counter, error)

	op    sync.Mutex
	mu    sync.Mutex
	armed *armed
}

// armedInfo is what arm tells of the armed receiver.
type armedInfo struct {
	method  receiver.Method // the counting method
	why     string          // why it was chosen
	xdpMode string          // receiver.XDPNative or XDPGeneric for xdp
	at      time.Time
	armed   *armed // the receiver armed (disarmIf)
}

// receiverState is the receiver as a watch sample shows it.
type receiverState struct {
	phase  phase
	report receiver.Report // while armed: what it counted so far
	since  time.Time       // while armed: when it was armed
}

// arm starts counting with o (interface and method defaulted); an armed
// receiver is re-armed, what it counted discarded.
func (r *receiving) arm(o receiver.Options) (armedInfo, error) {
	if o.Iface == "" {
		o.Iface = r.iface
	}
	if o.Method == "" {
		o.Method = receiver.MethodAuto
	}
	o.Logger = r.log.Named("receiver")
	if o.Method == receiver.MethodAFXDP && len(o.CPUs) == 0 && r.irqs != nil {
		o.CPUs = r.irqs.queueCPUs(o.Iface)
	}
	r.op.Lock()
	defer r.op.Unlock()
	if err := r.disarmOp(); err != nil {
		r.log.Warn("re-arm: the receiver armed before did not stop cleanly", "error", err)
	}
	start := r.start
	if start == nil {
		start = startReceiver
	}
	ctx, cancel := context.WithCancel(r.base)
	var rx counter
	err := r.thread.do(func() (err error) { rx, err = start(ctx, o); return err })
	if err != nil {
		cancel()
		if errors.Is(err, receiver.ErrOptions) {
			return armedInfo{}, failf(ErrInvalid, "arm: %v", err)
		}
		return armedInfo{}, failf(ErrHost, "arm %s: %v", o.Iface, err)
	}
	a := &armed{rx: rx, cancel: cancel, at: time.Now(), irqs: r.irqs.begin(o.Iface)}
	r.mu.Lock()
	r.armed = a
	r.mu.Unlock()
	r.metrics.runsStarted.WithLabelValues(runReceiver).Inc()
	r.changes.notify()
	m, why := rx.Method()
	r.log.Info("receiver armed", "iface", o.Iface, "method", m, "xdp_mode", rx.XDPMode(), "why", why)
	return armedInfo{method: m, why: why, xdpMode: rx.XDPMode(), at: a.at, armed: a}, nil
}

// collect is what the receiver counted: a snapshot when keepArmed, else
// its final report (the receiver is disarmed) and where the NIC's queue
// IRQs fired since Arm.
func (r *receiving) collect(keepArmed bool) (*receiver.Report, *irqCheck, error) {
	r.op.Lock()
	defer r.op.Unlock()
	r.mu.Lock()
	a := r.armed
	if a != nil && !keepArmed {
		a.ending = true
	}
	r.mu.Unlock()
	if a == nil {
		return nil, nil, failf(ErrNotReady, "collect: the receiver is not armed (Arm first)")
	}
	if keepArmed {
		rep := a.rx.Snapshot()
		r.metrics.countReceived(a, rep.TestPackets())
		return &rep, nil, nil
	}
	rep, err := a.rx.Stop()
	irqs := r.irqs.end(a.irqs)
	a.cancel()
	r.forget(a)
	r.metrics.runEnded(runReceiver, err)
	if err != nil {
		return nil, nil, failf(ErrFailed, "collect: stop the receiver: %v", err)
	}
	r.metrics.countReceived(a, rep.TestPackets())
	return rep, &irqs, nil
}

// disarm stops an armed receiver, discarding what it counted.
//
// The receiver reads as armed until it is closed: a watcher that sees it
// idle knows nothing of it runs any more.
func (r *receiving) disarm() error {
	r.op.Lock()
	defer r.op.Unlock()
	return r.disarmOp()
}

// disarmIf disarms a when it is still the armed receiver (an arm undone
// leaves a later arm alone).
func (r *receiving) disarmIf(a *armed) error {
	r.op.Lock()
	defer r.op.Unlock()
	r.mu.Lock()
	current := r.armed == a
	r.mu.Unlock()
	if !current {
		return nil
	}
	return r.disarmOp()
}

// disarmOp is disarm; callers hold r.op.
func (r *receiving) disarmOp() error {
	r.mu.Lock()
	a := r.armed
	if a != nil {
		a.ending = true
	}
	r.mu.Unlock()
	if a == nil {
		return nil
	}
	a.cancel()
	err := a.rx.Close()
	r.forget(a)
	r.metrics.runEnded(runReceiver, err)
	if err != nil {
		return fmt.Errorf("disarm the receiver: %w", err)
	}
	return nil
}

// forget drops a, which has stopped; callers hold r.op.
func (r *receiving) forget(a *armed) {
	r.mu.Lock()
	if r.armed == a {
		r.armed = nil
	}
	r.mu.Unlock()
	r.changes.notify()
}

// state is the receiver now. The snapshot is read outside r.mu; while a
// collect or disarm stops the receiver, the last snapshot read stands for
// it (the stop holds the receiver's own lock for its final scans).
func (r *receiving) state() receiverState {
	r.mu.Lock()
	a := r.armed
	if a == nil {
		r.mu.Unlock()
		return receiverState{phase: phaseIdle}
	}
	if a.ending {
		st := receiverState{phase: phaseArmed, report: a.last, since: a.at}
		r.mu.Unlock()
		return st
	}
	r.mu.Unlock()
	rep := a.rx.Snapshot()
	r.mu.Lock()
	a.last = rep
	r.mu.Unlock()
	return receiverState{phase: phaseArmed, report: rep, since: a.at}
}

// withinBudget refuses receiver options whose per-stream state on a host
// of cpus CPUs (receiver.Options.MemoryBytes: the windows, the seen runs
// and every CPU's state, the most the data plane can make them) is more
// than budget bytes, naming the numbers. It is the same whatever the
// method: auto's fallback to AF_PACKET counts against it as XDP does. The
// coordinator checks the sequence state before it leases (Describe
// announces the budget); this is the line for every caller.
func withinBudget(o receiver.Options, budget uint64, cpus int) error {
	o, err := o.WithDefaults()
	if err != nil {
		return failf(ErrInvalid, "arm: %v", err)
	}
	need, err := o.MemoryBytes(cpus)
	if err != nil {
		return failf(ErrInvalid, "arm: %v", err)
	}
	if need <= budget {
		return nil
	}
	return failf(ErrBudget, "arm: %d streams × a window of %d sequences on %d CPUs need %d MiB of receiver state, the receiver's budget is %d MiB (--receiver-memory)",
		o.MaxStreams, o.Window, cpus, mib(need), mib(budget))
}

// mib is n bytes in MiB, rounded up.
func mib(n uint64) uint64 { return (n + 1<<20 - 1) >> 20 }
