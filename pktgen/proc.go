package pktgen

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// DefaultProcDir is where the kernel exposes pktgen.
const DefaultProcDir = "/proc/net/pktgen"

// Proc is the /proc/net/pktgen directory: every OS touch of the kernel
// backend goes through it, so tests can drive a simulated pktgen.
type Proc interface {
	// Write writes one command to a file of the directory ("pgctrl",
	// "kpktgend_0", "eth0@0") with a single write(2).
	Write(name, cmd string) error
	// Read reads a whole file.
	Read(name string) ([]byte, error)
	// Start waits for the instant at (WaitUntil; zero: at once), writes
	// "start" to pgctrl and blocks until every device has stopped. It
	// must not be disturbed by signals meant for the process: a signal
	// pending on the writer stops every pktgen thread.
	Start(at time.Time) error
}

// DirProc is the real pktgen directory (DefaultProcDir, or the same tree
// elsewhere).
type DirProc struct{ Dir string }

// Write implements Proc.
func (d DirProc) Write(name, cmd string) error {
	return writeOnce(filepath.Join(d.Dir, name), cmd)
}

// Read implements Proc.
func (d DirProc) Read(name string) ([]byte, error) {
	return os.ReadFile(filepath.Join(d.Dir, name))
}

// Start implements Proc.
func (d DirProc) Start(at time.Time) error {
	return startIsolated(filepath.Join(d.Dir, "pgctrl"), at)
}

// writeOnce opens, writes cmd plus a newline with one write(2), closes.
// The newline matters: before 6.15 pgctrl dropped the last byte.
func writeOnce(path, cmd string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	return writeTo(f, path, cmd)
}

// writeTo writes cmd plus a newline to f (opened from path) with one
// write(2) and closes it.
func writeTo(f *os.File, path, cmd string) error {
	_, werr := f.Write([]byte(cmd + "\n"))
	cerr := f.Close()
	if werr != nil {
		return werr
	}
	if cerr != nil {
		return fmt.Errorf("close %s: %w", path, cerr)
	}
	return nil
}
