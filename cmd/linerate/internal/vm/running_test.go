package vm

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeProc makes procDir a fixture with one process.
func fakeProc(t *testing.T, pid int, cmdline []string, state string) {
	t.Helper()
	root := t.TempDir()
	d := filepath.Join(root, strconv.Itoa(pid))
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "cmdline"), []byte(strings.Join(cmdline, "\x00")+"\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "stat"), []byte(strconv.Itoa(pid)+" (x) y) "+state+" 1 2 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := procDir
	procDir = root
	t.Cleanup(func() { procDir = old })
}

func writePid(t *testing.T, dir string, pid int) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, PidFile), []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// StopDir signals nothing but a qemu of its own directory.
func TestStopDirRefusesOtherProcesses(t *testing.T) {
	dir := t.TempDir()
	// This test binary: alive, and not qemu. (The real /proc.)
	writePid(t, dir, os.Getpid())
	err := StopDir(dir, time.Second)
	if err == nil || !strings.Contains(err.Error(), "refusing to signal pid "+strconv.Itoa(os.Getpid())) || !strings.Contains(err.Error(), "not qemu") {
		t.Errorf("StopDir of a non-qemu pid: %v", err)
	}

	const pid = 424242
	writePid(t, dir, pid)
	fakeProc(t, pid, []string{"/usr/bin/qemu-system-x86_64", "-pidfile", "/elsewhere/qemu.pid"}, "S")
	if err := StopDir(dir, time.Second); err == nil || !strings.Contains(err.Error(), "another directory") {
		t.Errorf("StopDir of another directory's qemu: %v", err)
	}
	if _, ok := RunningQEMU(dir); ok {
		t.Error("another directory's qemu taken for this one's")
	}
	fakeProc(t, pid, []string{"/usr/bin/qemu-system-x86_64", "-pidfile", filepath.Join(dir, PidFile)}, "S")
	if got, ok := RunningQEMU(dir); !ok || got != pid {
		t.Errorf("RunningQEMU = %d, %v; want %d", got, ok, pid)
	}
}

// Nothing to stop is no error: no pid file, a pid that has exited, a zombie.
func TestStopDirNothingRunning(t *testing.T) {
	dir := t.TempDir()
	if err := StopDir(dir, time.Second); err != nil {
		t.Errorf("no pid file: %v", err)
	}
	const pid = 424243
	writePid(t, dir, pid)
	fakeProc(t, pid+1, []string{"qemu-system-x86_64"}, "S")
	if err := StopDir(dir, time.Second); err != nil {
		t.Errorf("pid gone: %v", err)
	}
	fakeProc(t, pid, []string{"qemu-system-x86_64", "-pidfile", filepath.Join(dir, PidFile)}, "Z")
	if err := StopDir(dir, time.Second); err != nil {
		t.Errorf("zombie: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, PidFile), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := StopDir(dir, time.Second); err == nil || !strings.Contains(err.Error(), "not a pid") {
		t.Errorf("garbage pid file: %v", err)
	}
}
