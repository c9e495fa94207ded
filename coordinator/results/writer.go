package results

import (
	"fmt"
	"os"
	"time"
)

// Document statuses besides a run's (coordinator.StatusOK, StatusFailed,
// StatusPartial).
const (
	// StatusRunning: the campaign is in progress; its writer saves the
	// document after every trial. A running document whose writer is
	// gone is presented as StatusInterrupted (Store.Load, Store.List).
	StatusRunning = "running"
	// StatusInterrupted: the campaign stopped before its end (Ctrl-C, a
	// signal, SIGKILL, a crash, a reboot); its trials so far are kept and
	// `linerate campaign resume` continues it.
	StatusInterrupted = "interrupted"
)

// Writer is the process that writes a document while its campaign runs:
// enough to tell later whether it still runs, and to tell it apart from
// another process that got the same pid.
type Writer struct {
	PID  int    `json:"pid"`
	Host string `json:"host"` // os.Hostname
	// BootID is the kernel's boot id (Linux): a document written before
	// a reboot has no living writer, whatever runs under its pid now.
	BootID string `json:"boot_id,omitempty"`
	// Started is when the process started (Linux: from /proc; elsewhere
	// when this package was loaded).
	Started time.Time `json:"started"`
}

// String names the writer in messages: "pid 4711 on lab1".
func (w Writer) String() string { return fmt.Sprintf("pid %d on %s", w.PID, w.Host) }

// Processes tells whether the writer of a document still runs.
type Processes interface {
	// Self is this process as a document records its writer.
	Self() Writer
	// Alive reports whether w's process still runs. known is false when
	// this host cannot tell (w ran on another host).
	Alive(w Writer) (alive, known bool)
}

// LocalProcesses are the processes of this host, read from Root's /proc
// on Linux ("" is /), with kill(pid, 0) elsewhere.
type LocalProcesses struct {
	Root string
}

// loaded stands in for the process start time where /proc cannot say.
var loaded = time.Now().UTC()

// Self is this process.
func (p LocalProcesses) Self() Writer {
	host, _ := os.Hostname()
	w := Writer{PID: os.Getpid(), Host: host, BootID: p.bootID(), Started: loaded}
	if t, ok := p.started(w.PID); ok {
		w.Started = t
	}
	return w
}

// Alive tells whether w runs: on another host it cannot tell; on this
// one, a writer from before the last boot is gone, and so is a pid that
// no process has or that a process started at another time has.
func (p LocalProcesses) Alive(w Writer) (alive, known bool) {
	self := p.Self()
	if w.Host != self.Host {
		return false, false
	}
	if w.BootID != "" && self.BootID != "" && w.BootID != self.BootID {
		return false, true
	}
	if w.PID == self.PID {
		return sameStart(w.Started, self.Started), true
	}
	if t, ok := p.started(w.PID); ok {
		return sameStart(w.Started, t), true
	}
	return p.exists(w.PID), true
}

// sameStart compares start times read at different moments: /proc's boot
// time may move by a second with clock adjustments.
func sameStart(a, b time.Time) bool {
	d := a.Sub(b)
	return d > -2*time.Second && d < 2*time.Second
}
