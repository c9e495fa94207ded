package topology

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// fakeRoot is a fixture root whose affinity writes can fail with chosen
// errnos, or "succeed" without taking effect, as real kernels do.
type fakeRoot struct {
	*DirRoot
	mu      sync.Mutex
	errs    map[string][]error // per path: errors for successive writes (nil = write)
	ignored map[string]bool    // write reports success but changes nothing
	writes  []string           // "path=value" of every write attempted
}

func newFake(r *DirRoot) *fakeRoot {
	return &fakeRoot{DirRoot: r, errs: map[string][]error{}, ignored: map[string]bool{}}
}

func (f *fakeRoot) fail(path string, errs ...error) { f.errs[path] = errs }

func (f *fakeRoot) WriteFile(name string, data []byte) error {
	f.mu.Lock()
	f.writes = append(f.writes, name+"="+strings.TrimSpace(string(data)))
	var err error
	if q := f.errs[name]; len(q) > 0 {
		err, f.errs[name] = q[0], q[1:]
	}
	ignored := f.ignored[name]
	f.mu.Unlock()
	if err != nil {
		return &fs.PathError{Op: "write", Path: name, Err: err}
	}
	if ignored {
		return nil
	}
	return f.DirRoot.WriteFile(name, data)
}

func read(t *testing.T, r Root, p string) string {
	t.Helper()
	s, err := readString(r, p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func affinities(t *testing.T, r Root) map[int]string {
	t.Helper()
	out := map[int]string{}
	for irq := 40; irq <= 45; irq++ {
		out[irq] = read(t, r, "/proc/irq/"+itoa(irq)+"/smp_affinity_list")
	}
	return out
}

func itoa(i int) string { return strconv.Itoa(i) }

var untouched = map[int]string{40: "0-7", 41: "0-7", 42: "0-7", 43: "0-7", 44: "0-7", 45: "0-7"}

func noSleep(context.Context, time.Duration) error { return nil }

func setup(t *testing.T) (*fakeRoot, *Plan, string) {
	t.Helper()
	dr, _ := fixture(t, "apply-basic")
	r := newFake(dr)
	n, err := Inspect(r, "eth0")
	if err != nil {
		t.Fatal(err)
	}
	p, err := MakePlan(n, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r, p, t.TempDir()
}

func opts(state string) ApplyOptions {
	return ApplyOptions{StateDir: state, Sleep: noSleep}
}

func TestApplyRestoreRoundTrip(t *testing.T) {
	r, p, state := setup(t)
	res, err := Apply(context.Background(), r, p, opts(state))
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]string{40: "0-7", 41: "0", 42: "1", 43: "2", 44: "3", 45: "0-7"}
	if diff := cmp.Diff(want, affinities(t, r)); diff != "" {
		t.Fatalf("after apply (-want +got):\n%s", diff)
	}
	for _, c := range res.Changes {
		if c.Status != StatusApplied || c.From != "0-7" || c.ReadBack != c.To {
			t.Errorf("change %+v: want applied from 0-7 with read-back = to", c)
		}
	}
	j, err := LoadJournal(state, "eth0")
	if err != nil || j == nil {
		t.Fatalf("journal after apply: %v %v", j, err)
	}
	if len(j.Entries) != 4 || j.Entries[0].Original != "0-7" || j.Entries[0].Name != "eth0-TxRx-0" || j.Entries[0].CPU != 0 {
		t.Errorf("journal entries: %+v", j.Entries)
	}

	rr, err := Restore(context.Background(), r, RestoreOptions{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(untouched, affinities(t, r)); diff != "" {
		t.Fatalf("after restore (-want +got):\n%s", diff)
	}
	if len(rr) != 1 || len(rr[0].Changes) != 4 || rr[0].Changes[0].Status != StatusRestored {
		t.Errorf("restore result: %+v", rr)
	}
	if _, err := os.Stat(JournalPath(state, "eth0")); !os.IsNotExist(err) {
		t.Errorf("journal still there after restore: %v", err)
	}
	// A second restore is a no-op.
	before := len(r.writes)
	rr, err = Restore(context.Background(), r, RestoreOptions{StateDir: state})
	if err != nil || len(rr) != 0 || len(r.writes) != before {
		t.Errorf("second restore: %+v, %v, %d new writes", rr, err, len(r.writes)-before)
	}
}

func TestApplyErrnos(t *testing.T) {
	aff := func(irq int) string { return "/proc/irq/" + itoa(irq) + "/smp_affinity_list" }
	tests := []struct {
		name      string
		prep      func(*fakeRoot)
		wantErr   error
		want      map[int]string // affinities afterwards
		status    map[int]string // IRQ → change status
		journaled bool           // journal exists afterwards
	}{{
		name:      "EIO means managed: skipped, the rest applied",
		prep:      func(f *fakeRoot) { f.fail(aff(42), unix.EIO) },
		want:      map[int]string{40: "0-7", 41: "0", 42: "0-7", 43: "2", 44: "3", 45: "0-7"},
		status:    map[int]string{41: StatusApplied, 42: StatusManaged, 43: StatusApplied},
		journaled: true,
	}, {
		name:      "EPERM (6.12+) means managed too",
		prep:      func(f *fakeRoot) { f.fail(aff(44), unix.EPERM) },
		want:      map[int]string{40: "0-7", 41: "0", 42: "1", 43: "2", 44: "0-7", 45: "0-7"},
		status:    map[int]string{44: StatusManaged},
		journaled: true,
	}, {
		name:    "EACCES stops and rolls back",
		prep:    func(f *fakeRoot) { f.fail(aff(43), unix.EACCES) },
		wantErr: ErrNoPermission,
		want:    untouched,
	}, {
		name:    "EROFS (container) stops and rolls back",
		prep:    func(f *fakeRoot) { f.fail(aff(41), unix.EROFS) },
		wantErr: ErrNoPermission,
		want:    untouched,
	}, {
		name:      "EBUSY is retried",
		prep:      func(f *fakeRoot) { f.fail(aff(42), unix.EBUSY, unix.EAGAIN) },
		want:      map[int]string{40: "0-7", 41: "0", 42: "1", 43: "2", 44: "3", 45: "0-7"},
		status:    map[int]string{42: StatusApplied},
		journaled: true,
	}, {
		name: "EBUSY forever fails and rolls back",
		prep: func(f *fakeRoot) {
			f.fail(aff(43), unix.EBUSY, unix.EBUSY, unix.EBUSY, unix.EBUSY, unix.EBUSY, unix.EBUSY, unix.EBUSY)
		},
		wantErr: unix.EBUSY,
		want:    untouched,
	}, {
		name:      "ENOSPC moves to the next candidate CPU",
		prep:      func(f *fakeRoot) { f.fail(aff(42), unix.ENOSPC) },
		want:      map[int]string{40: "0-7", 41: "0", 42: "2", 43: "2", 44: "3", 45: "0-7"},
		status:    map[int]string{42: StatusApplied},
		journaled: true,
	}, {
		name:      "EINVAL (CPU went offline) moves on too",
		prep:      func(f *fakeRoot) { f.fail(aff(44), unix.EINVAL, unix.ERANGE) },
		want:      map[int]string{40: "0-7", 41: "0", 42: "1", 43: "2", 44: "1", 45: "0-7"},
		status:    map[int]string{44: StatusApplied},
		journaled: true,
	}, {
		name:    "every CPU refusing is a failure",
		prep:    func(f *fakeRoot) { f.fail(aff(41), unix.ENOSPC, unix.ENOSPC, unix.ENOSPC, unix.ENOSPC) },
		wantErr: ErrCPUUnavailable,
		want:    untouched,
	}, {
		name:    "write OK but read-back differs",
		prep:    func(f *fakeRoot) { f.ignored[aff(43)] = true },
		wantErr: ErrNotApplied,
		want:    untouched,
	}, {
		name:    "IRQ vanished",
		prep:    func(f *fakeRoot) { f.fail(aff(44), unix.ENOENT) },
		wantErr: ErrIRQVanished,
		want:    untouched,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, p, state := setup(t)
			tt.prep(r)
			res, err := Apply(context.Background(), r, p, opts(state))
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("Apply error = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, affinities(t, r)); diff != "" {
				t.Errorf("affinities (-want +got):\n%s", diff)
			}
			for irq, st := range tt.status {
				found := false
				for _, c := range res.Changes {
					if c.IRQ == irq {
						found = true
						if c.Status != st {
							t.Errorf("irq %d status %q, want %q (%+v)", irq, c.Status, st, c)
						}
					}
				}
				if !found {
					t.Errorf("no change reported for irq %d", irq)
				}
			}
			_, serr := os.Stat(JournalPath(state, "eth0"))
			if tt.journaled != (serr == nil) {
				t.Errorf("journal exists = %v, want %v", serr == nil, tt.journaled)
			}
		})
	}
}

func TestApplyErrorNamesIRQ(t *testing.T) {
	r, p, state := setup(t)
	r.fail("/proc/irq/43/smp_affinity_list", unix.EACCES)
	_, err := Apply(context.Background(), r, p, opts(state))
	for _, want := range []string{"irq 43", "eth0-TxRx-2", "cpu 2", "permission denied"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not name %q", err, want)
		}
	}
}

func TestApplyManagedFileNotWritten(t *testing.T) {
	dr, dir := fixture(t, "apply-basic")
	if err := os.Chmod(filepath.Join(dir, "proc/irq/42/smp_affinity_list"), 0o444); err != nil {
		t.Fatal(err)
	}
	r := newFake(dr)
	n, err := Inspect(r, "eth0")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := MakePlan(n, PlanOptions{})
	res, err := Apply(context.Background(), r, p, opts(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range r.writes {
		if strings.HasPrefix(w, "/proc/irq/42/") {
			t.Errorf("wrote to a 0444 (managed) affinity file: %s", w)
		}
	}
	if res.Changes[1].IRQ != 42 || res.Changes[1].Status != StatusManaged {
		t.Errorf("irq 42: %+v", res.Changes[1])
	}
}

func TestApplyHexMaskFallback(t *testing.T) {
	dr, dir := fixture(t, "apply-basic")
	for irq := 40; irq <= 45; irq++ {
		os.Remove(filepath.Join(dir, "proc/irq", itoa(irq), "smp_affinity_list"))
	}
	r := newFake(dr)
	n, err := Inspect(r, "eth0")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := MakePlan(n, PlanOptions{})
	state := t.TempDir()
	if _, err := Apply(context.Background(), r, p, opts(state)); err != nil {
		t.Fatal(err)
	}
	if got := read(t, r, "/proc/irq/44/smp_affinity"); got != "08" {
		t.Errorf("irq 44 mask = %q, want 08 (cpu 3 of 8)", got)
	}
	if _, err := Restore(context.Background(), r, RestoreOptions{StateDir: state, Iface: "eth0"}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, r, "/proc/irq/44/smp_affinity"); got != "ff" {
		t.Errorf("irq 44 mask after restore = %q, want ff", got)
	}
}

func TestApplyTwiceKeepsFirstOriginals(t *testing.T) {
	r, p, state := setup(t)
	if _, err := Apply(context.Background(), r, p, opts(state)); err != nil {
		t.Fatal(err)
	}
	// A second apply (say after a crash, with the journal left behind)
	// must not journal linerate's own pins as "originals".
	n, _ := Inspect(r, "eth0")
	p2, _ := MakePlan(n, PlanOptions{Threads: 2})
	res, err := Apply(context.Background(), r, p2, opts(state))
	if err != nil {
		t.Fatal(err)
	}
	if res.Changes[0].Status != StatusUnchanged {
		t.Errorf("re-applying the same pin: %+v, want unchanged", res.Changes[0])
	}
	if _, err := Restore(context.Background(), r, RestoreOptions{StateDir: state, Iface: "eth0"}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(untouched, affinities(t, r)); diff != "" {
		t.Errorf("restore after two applies (-want +got):\n%s", diff)
	}
}

func TestRestoreSkipsVanishedAndRenamed(t *testing.T) {
	r, p, state := setup(t)
	if _, err := Apply(context.Background(), r, p, opts(state)); err != nil {
		t.Fatal(err)
	}
	dir := r.Dir()
	if err := os.RemoveAll(filepath.Join(dir, "proc/irq/44")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sys/kernel/irq/43/actions"), []byte("eth9-TxRx-0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rr, err := Restore(context.Background(), r, RestoreOptions{StateDir: state, Iface: "eth0"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[int]string{}
	for _, c := range rr[0].Changes {
		got[c.IRQ] = c.Status + ": " + c.Note
	}
	if !strings.HasPrefix(got[44], StatusSkipped+": irq vanished") {
		t.Errorf("irq 44: %q", got[44])
	}
	if !strings.HasPrefix(got[43], StatusSkipped) || !strings.Contains(got[43], "eth9-TxRx-0") {
		t.Errorf("irq 43: %q", got[43])
	}
	if read(t, r, "/proc/irq/43/smp_affinity_list") != "2" {
		t.Error("renamed irq 43 was changed by restore")
	}
	if read(t, r, "/proc/irq/41/smp_affinity_list") != "0-7" {
		t.Error("irq 41 not restored")
	}
}

func TestRestoreKeepsJournalOnFailure(t *testing.T) {
	r, p, state := setup(t)
	if _, err := Apply(context.Background(), r, p, opts(state)); err != nil {
		t.Fatal(err)
	}
	r.fail("/proc/irq/42/smp_affinity_list", unix.EACCES)
	_, err := Restore(context.Background(), r, RestoreOptions{StateDir: state})
	if !errors.Is(err, ErrNoPermission) {
		t.Fatalf("restore error %v, want ErrNoPermission", err)
	}
	if _, err := os.Stat(JournalPath(state, "eth0")); err != nil {
		t.Fatalf("journal removed although restore failed: %v", err)
	}
	if _, err := Restore(context.Background(), r, RestoreOptions{StateDir: state}); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if diff := cmp.Diff(untouched, affinities(t, r)); diff != "" {
		t.Errorf("after retry (-want +got):\n%s", diff)
	}
}

func TestApplyIRQBalance(t *testing.T) {
	r, p, state := setup(t)
	pdir := filepath.Join(r.Dir(), "proc/777")
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pdir, "comm"), []byte("irqbalance\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Apply(context.Background(), r, p, opts(state))
	if !errors.Is(err, ErrIRQBalance) {
		t.Fatalf("err = %v, want ErrIRQBalance", err)
	}
	for _, want := range []string{"pid [777]", "--banirq=41 --banirq=42 --banirq=43 --banirq=44", "IRQBALANCE_BANNED_CPULIST=0-3", "--irqbalance=ignore"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q lacks %q", err, want)
		}
	}
	if len(r.writes) != 0 {
		t.Errorf("refusal wrote %v", r.writes)
	}
	o := opts(state)
	o.IRQBalance = IRQBalanceIgnore
	res, err := Apply(context.Background(), r, p, o)
	if err != nil || len(res.Warnings) == 0 || !strings.Contains(res.Warnings[0], "irqbalance") {
		t.Fatalf("ignore: %v %+v", err, res)
	}
	o.IRQBalance = "maybe"
	if _, err := Apply(context.Background(), r, p, o); err == nil || !strings.Contains(err.Error(), `"maybe": valid values are refuse and ignore`) {
		t.Errorf("bad policy error: %v", err)
	}
}

func TestApplyCancelledRollsBack(t *testing.T) {
	r, p, state := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	o := opts(state)
	calls := 0
	o.Sleep = func(context.Context, time.Duration) error { cancel(); calls++; return context.Canceled }
	r.fail("/proc/irq/43/smp_affinity_list", unix.EBUSY)
	_, err := Apply(ctx, r, p, o)
	if !errors.Is(err, context.Canceled) || calls != 1 {
		t.Fatalf("err %v after %d sleeps, want context.Canceled", err, calls)
	}
	if diff := cmp.Diff(untouched, affinities(t, r)); diff != "" {
		t.Errorf("after cancel (-want +got):\n%s", diff)
	}
}

func TestRestoreRefusesJournalOfAnotherRoot(t *testing.T) {
	r, p, state := setup(t)
	o := opts(state)
	o.RootName = "/tmp/fixture-host"
	if _, err := Apply(context.Background(), r, p, o); err != nil {
		t.Fatal(err)
	}
	before := len(r.writes)
	_, err := Restore(context.Background(), r, RestoreOptions{StateDir: state, RootName: "/"})
	if err == nil || !strings.Contains(err.Error(), "--root /tmp/fixture-host") || len(r.writes) != before {
		t.Fatalf("restore with another root: %v, %d writes", err, len(r.writes)-before)
	}
	if _, err := Restore(context.Background(), r, RestoreOptions{StateDir: state, RootName: "/tmp/fixture-host/"}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(untouched, affinities(t, r)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestClassify(t *testing.T) {
	for errno, want := range map[syscall.Errno]errClass{
		unix.EIO: classManaged, unix.EPERM: classManaged, unix.EACCES: classNoPerm, unix.EROFS: classNoPerm,
		unix.EBUSY: classRetry, unix.EAGAIN: classRetry, unix.ENOSPC: classNextCPU, unix.EINVAL: classNextCPU,
		unix.ERANGE: classNextCPU, unix.EOVERFLOW: classNextCPU, unix.ENOENT: classVanished, unix.ENOMEM: classFatal,
	} {
		if got := classify(&fs.PathError{Op: "write", Path: "x", Err: errno}); got != want {
			t.Errorf("classify(%v) = %v, want %v", errno, got, want)
		}
	}
}

// An IRQ whose effective affinity is still its old CPU after the write
// (x86 moves it at its next interrupt; apply-basic's effective affinities
// stay as the fixture has them) is a note of its change, not a warning:
// nothing is wrong and nothing is to be done. Where it then fires is
// Compare's to judge (TestCompare*: off its CPUs when it stayed).
func TestApplyPendingMoveIsANote(t *testing.T) {
	r, p, state := setup(t)
	res, err := Apply(context.Background(), r, p, opts(state))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 0 {
		t.Errorf("warnings %q: want none for a move the kernel makes at the next interrupt", res.Warnings)
	}
	var noted int
	for _, c := range res.Changes {
		pending := c.Effective != "" && c.Effective != c.To
		want := "effective affinity " + c.Effective + " until its next interrupt"
		switch {
		case pending && !strings.Contains(c.Note, want):
			t.Errorf("irq %d to %s, effective %s: note %q, want %q", c.IRQ, c.To, c.Effective, c.Note, want)
		case !pending && c.Note != "":
			t.Errorf("irq %d to %s, effective %s: note %q, want none", c.IRQ, c.To, c.Effective, c.Note)
		}
		if pending {
			noted++
		}
	}
	if noted == 0 {
		t.Fatalf("no change with a pending move in %+v: the fixture no longer tests one", res.Changes)
	}
}
