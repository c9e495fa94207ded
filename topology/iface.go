package topology

import (
	"context"
	"errors"

	"github.com/linerate/linerate/topology/cpuset"
)

// The operations `linerate irq` runs, each from an interface's name on a
// root: inspect it, then report, plan, verify or record it. Errors of
// Inspect wrap ErrNoInterface or ErrNoDevice when the interface has no
// NIC topology.

// ErrExclude is returned when a list of CPUs to exclude does not parse
// or names CPUs the host does not have.
var ErrExclude = errors.New("CPUs to exclude")

// excludeError is a list of CPUs to exclude that does not parse: the
// parser's error, matching ErrExclude too.
type excludeError struct{ err error }

func (e excludeError) Error() string   { return e.err.Error() }
func (e excludeError) Unwrap() []error { return []error{ErrExclude, e.err} }

// ShowIface is what Inspect finds of iface below r, as a report.
func ShowIface(r Root, iface string) (*Report, error) {
	n, err := Inspect(r, iface)
	if err != nil {
		return nil, err
	}
	return ShowReport(n), nil
}

// PlanIface inspects iface below r and plans its queue IRQs (MakePlan)
// over the first threads queues (0: all), keeping them off the CPUs of
// the list exclude ("0,8-9"; its errors wrap ErrExclude and the
// cpuset error), which is read against the host's CPU count.
func PlanIface(r Root, iface string, threads int, exclude string) (*Plan, error) {
	n, err := Inspect(r, iface)
	if err != nil {
		return nil, err
	}
	excl, err := cpuset.ParseList(exclude, n.NrCPUs)
	if err != nil {
		return nil, excludeError{err}
	}
	return MakePlan(n, PlanOptions{Threads: threads, Exclude: excl})
}

// VerifyIface inspects iface below r and verifies where its queue IRQs
// fire (Verify) against the journal of stateDir when it has one for
// iface.
func VerifyIface(ctx context.Context, r Root, iface, stateDir string, wait func(context.Context) error) (*VerifyResult, error) {
	n, err := Inspect(r, iface)
	if err != nil {
		return nil, err
	}
	j, err := LoadJournal(stateDir, iface)
	if err != nil {
		return nil, err
	}
	return Verify(ctx, r, n, j, wait)
}

// RecordIface reads below base exactly what inspecting, planning and
// verifying iface read, and what doctor's file checks read
// (recordHostFiles), into a Recorder whose snapshot (SaveTarGz) replays
// them elsewhere.
func RecordIface(base Root, iface string) (*Recorder, error) {
	rec := NewRecorder(base)
	n, err := Inspect(rec, iface)
	if err != nil {
		return nil, err
	}
	if _, err := MakePlan(n, PlanOptions{}); err != nil {
		return nil, err
	}
	if _, err := ReadInterrupts(rec); err != nil {
		return nil, err
	}
	recordHostFiles(base, rec, n)
	return rec, nil
}
