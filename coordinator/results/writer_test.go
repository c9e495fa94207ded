package results

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestLocalProcesses(t *testing.T) {
	p := LocalProcesses{}
	self := p.Self()
	if self.PID != os.Getpid() || self.Host == "" || self.Started.IsZero() || self.Started.After(time.Now()) {
		t.Fatalf("self %+v", self)
	}
	if alive, known := p.Alive(self); !alive || !known {
		t.Errorf("this process: alive %v known %v", alive, known)
	}
	// A process that ran and exited.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no true(1):", err)
	}
	dead := self
	dead.PID = cmd.Process.Pid
	if alive, known := p.Alive(dead); alive || !known {
		t.Errorf("exited pid %d: alive %v known %v", dead.PID, alive, known)
	}
	if _, err := os.Stat("/proc/self/stat"); err == nil {
		reused := self
		reused.Started = self.Started.Add(-time.Hour) // this pid, another process's start
		if alive, _ := p.Alive(reused); alive {
			t.Error("a pid that started at another time is taken for the writer")
		}
		if self.BootID != "" {
			before := self
			before.BootID = "another-boot"
			if alive, known := p.Alive(before); alive || !known {
				t.Errorf("a writer from another boot: alive %v known %v", alive, known)
			}
		}
	}
	other := self
	other.Host = self.Host + "-elsewhere"
	if _, known := p.Alive(other); known {
		t.Error("a writer on another host is taken as known")
	}
}

type procs map[int]bool // pid → alive; a missing pid is on another host

func (p procs) Self() Writer { return Writer{PID: 1, Host: "here"} }
func (p procs) Alive(w Writer) (bool, bool) {
	alive, ok := p[w.PID]
	return alive, ok
}

// A running document whose writer is gone reads as interrupted, with how
// to continue it; the file is not rewritten.
func TestStorePresentsGoneWriterAsInterrupted(t *testing.T) {
	s := NewStore(t.TempDir())
	s.Processes = procs{10: true, 11: false}
	mk := func(id string, w *Writer) {
		d := &Document{Schema: Schema, ID: id, Kind: KindCampaign, Status: StatusRunning, Writer: w, Trials: []Trial{{N: 1}, {N: 2}}}
		if _, err := s.Save(d); err != nil {
			t.Fatal(err)
		}
	}
	mk("a-alive", &Writer{PID: 10, Host: "here"})
	mk("b-gone", &Writer{PID: 11, Host: "here", Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)})
	mk("c-elsewhere", &Writer{PID: 12, Host: "there"})
	want := map[string]string{"a-alive": StatusRunning, "b-gone": StatusInterrupted, "c-elsewhere": StatusRunning}
	for id, status := range want {
		d, err := s.Load(id)
		if err != nil || d.Status != status {
			t.Errorf("%s: %v %v", id, d, err)
		}
	}
	d, _ := s.Load("b-gone")
	for _, w := range []string{"pid 11 on here", "2026-01-02T03:04:05Z", "2 trials kept", "linerate campaign resume b-gone"} {
		if !strings.Contains(d.Error, w) {
			t.Errorf("interrupted document's error %q does not say %q", d.Error, w)
		}
	}
	entries, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Status != want[e.ID] {
			t.Errorf("list: %s %s, want %s", e.ID, e.Status, want[e.ID])
		}
	}
	if d, _ := ReadFile(s.Path("b-gone")); d.Status != StatusRunning {
		t.Errorf("the file was rewritten: %s", d.Status)
	}
}
