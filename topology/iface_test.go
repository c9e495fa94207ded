package topology

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linerate/linerate/topology/cpuset"
)

// The interface operations inspect first: a missing interface is
// ErrNoInterface, a device-less one ErrNoDevice, whatever follows.
func TestIfaceOperationsInspect(t *testing.T) {
	r, _ := fixture(t, "apply-basic")
	wait := func(context.Context) error { return nil }
	for name, op := range map[string]func(iface string) error{
		"show":   func(i string) error { _, err := ShowIface(r, i); return err },
		"plan":   func(i string) error { _, err := PlanIface(r, i, 0, ""); return err },
		"verify": func(i string) error { _, err := VerifyIface(context.Background(), r, i, t.TempDir(), wait); return err },
		"record": func(i string) error { _, err := RecordIface(r, i); return err },
	} {
		if err := op("nosuch0"); !errors.Is(err, ErrNoInterface) {
			t.Errorf("%s of a missing interface: %v, want ErrNoInterface", name, err)
		}
		if err := op("eth0"); err != nil {
			t.Errorf("%s eth0: %v", name, err)
		}
	}
	rep, err := ShowIface(r, "eth0")
	if err != nil || rep.Iface != "eth0" || len(rep.Queues) == 0 {
		t.Errorf("show: %+v %v", rep, err)
	}
}

// A plan covers the threads asked for, off the excluded CPUs; a list
// that does not parse, or names CPUs the host lacks, is ErrExclude with
// the parser's error and its message.
func TestPlanIface(t *testing.T) {
	r, _ := fixture(t, "apply-basic")
	p, err := PlanIface(r, "eth0", 2, "0")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Assignments) == 0 {
		t.Fatal("no assignments")
	}
	queues := map[int]bool{}
	for _, a := range p.Assignments {
		queues[a.Queue] = true
		if a.CPU == 0 {
			t.Errorf("queue %d on excluded CPU 0", a.Queue)
		}
	}
	if len(queues) != 2 {
		t.Errorf("queues %v, want 2", queues)
	}
	for _, tt := range []struct {
		exclude string
		is      error
	}{{"3-1", cpuset.ErrSyntax}, {"4096", cpuset.ErrRange}} {
		_, err := PlanIface(r, "eth0", 0, tt.exclude)
		if !errors.Is(err, ErrExclude) || !errors.Is(err, tt.is) || !strings.HasPrefix(err.Error(), "parse cpu list") {
			t.Errorf("exclude %q: %v, want ErrExclude and %v", tt.exclude, err, tt.is)
		}
	}
	if _, err := PlanIface(r, "eth0", 99, ""); !errors.Is(err, ErrTooManyThreads) {
		t.Errorf("99 threads: %v, want ErrTooManyThreads", err)
	}
}

// A recording replays: the snapshot it writes plans as the host does.
func TestRecordIface(t *testing.T) {
	r, _ := fixture(t, "apply-basic")
	rec, err := RecordIface(r, "eth0")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "host.tar.gz")
	if err := rec.SaveTarGz(path); err != nil {
		t.Fatal(err)
	}
	snap, err := OpenSnapshot(path)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	want, _ := PlanIface(r, "eth0", 0, "")
	got, err := PlanIface(snap, "eth0", 0, "")
	if err != nil || len(got.Assignments) != len(want.Assignments) {
		t.Errorf("replayed plan: %v %v, want %d assignments", got, err, len(want.Assignments))
	}
	if _, err := VerifyIface(context.Background(), snap, "eth0", t.TempDir(), func(context.Context) error { return nil }); err != nil {
		t.Errorf("verify on the snapshot: %v", err)
	}
}
