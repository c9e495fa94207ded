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

// armed is the receiver while it counts.
type armed struct {
	rx      *receiver.Receiver
	cancel  context.CancelFunc
	at      time.Time
	counted uint64   // test packets the metrics counted so far
	irqs    *irqSpan // the queue IRQs' counts at Arm
}

// receiving is the receiver's lifecycle: arm, collect (keeping it armed or
// not), disarm.
type receiving struct {
	base    context.Context // ends every receiver at shutdown
	iface   string          // the default interface
	thread  nsThread
	log     hclog.Logger
	metrics *metrics
	changes *changes
	irqs    *irqVerifier

	mu    sync.Mutex
	armed *armed
}

// armedInfo is what arm tells of the armed receiver.
type armedInfo struct {
	method, why string // the counting method and why it was chosen
	at          time.Time
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
	r.mu.Lock()
	defer r.mu.Unlock()
	if old := r.armed; old != nil {
		old.cancel()
		r.metrics.runEnded(runReceiver, old.rx.Close())
		r.armed = nil
	}
	ctx, cancel := context.WithCancel(r.base)
	var rx *receiver.Receiver
	err := r.thread.do(func() (err error) { rx, err = receiver.Start(ctx, o); return err })
	if err != nil {
		cancel()
		if errors.Is(err, receiver.ErrOptions) {
			return armedInfo{}, failf(ErrInvalid, "arm: %v", err)
		}
		return armedInfo{}, failf(ErrHost, "arm %s: %v", o.Iface, err)
	}
	a := &armed{rx: rx, cancel: cancel, at: time.Now(), irqs: r.irqs.begin(o.Iface)}
	r.armed = a
	r.metrics.runsStarted.WithLabelValues(runReceiver).Inc()
	r.changes.notify()
	m, why := rx.Method()
	r.log.Info("receiver armed", "iface", o.Iface, "method", m, "why", why)
	return armedInfo{method: m, why: why, at: a.at}, nil
}

// collect is what the receiver counted: a snapshot when keepArmed, else
// its final report (the receiver is disarmed) and where the NIC's queue
// IRQs fired since Arm.
func (r *receiving) collect(keepArmed bool) (*receiver.Report, *irqCheck, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := r.armed
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
	r.armed = nil
	r.changes.notify()
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
	r.mu.Lock()
	defer r.mu.Unlock()
	a := r.armed
	if a == nil {
		return nil
	}
	a.cancel()
	err := a.rx.Close()
	r.armed = nil
	r.metrics.runEnded(runReceiver, err)
	if err != nil {
		return fmt.Errorf("disarm the receiver: %w", err)
	}
	return nil
}

// state is the receiver now.
func (r *receiving) state() receiverState {
	r.mu.Lock()
	defer r.mu.Unlock()
	if a := r.armed; a != nil {
		return receiverState{phase: phaseArmed, report: a.rx.Snapshot(), since: a.at}
	}
	return receiverState{phase: phaseIdle}
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
