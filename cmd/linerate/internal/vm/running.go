package vm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Running is a started Machine.
type Running struct {
	name    string
	dir     string
	cmd     *exec.Cmd
	pid     int // qemu's, from PidFile
	log     hclog.Logger
	started time.Time
	accel   string // AccelKVM or AccelTCG

	done    chan struct{}
	waitErr error // cmd.Wait's, set before done closes

	stopOnce sync.Once
	stopErr  error
}

// Pid is qemu's process id.
func (r *Running) Pid() int { return r.pid }

// Dir is the machine's directory.
func (r *Running) Dir() string { return r.dir }

// Done is closed when qemu has exited.
func (r *Running) Done() <-chan struct{} { return r.done }

// Err is qemu's exit after Done (nil before): nil when the guest powered
// off, an ErrSetup error naming what failed when /init could not set the
// guest up, else qemu's exit status with the end of QEMULog.
func (r *Running) Err() error {
	select {
	case <-r.done:
	default:
		return nil
	}
	if msg := setupFailure(r.dir); msg != "" {
		return fmt.Errorf("machine %s: %w: %s (see %s)", r.name, ErrSetup, msg, filepath.Join(r.dir, ConsoleLog))
	}
	if r.waitErr != nil {
		return fmt.Errorf("machine %s: qemu: %w%s", r.name, r.waitErr, fileTail(filepath.Join(r.dir, QEMULog)))
	}
	return nil
}

func (r *Running) wait() {
	r.waitErr = r.cmd.Wait()
	r.log.Debug("qemu exited", "name", r.name, "after", time.Since(r.started).Round(time.Millisecond), "error", r.waitErr)
	close(r.done)
}

// waitStarted returns once the guest has written to its console (qemu
// has opened its devices and runs the machine) and qemu wrote its pid.
func (r *Running) waitStarted(ctx context.Context) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	bound := time.NewTimer(startBound)
	defer bound.Stop()
	for {
		if r.pid == 0 {
			r.pid, _ = readPid(r.dir)
		}
		if fi, err := os.Stat(filepath.Join(r.dir, ConsoleLog)); err == nil && fi.Size() > 0 && r.pid != 0 {
			return nil
		}
		if msg := qemuStopped(r.dir); msg != "" {
			return fmt.Errorf("qemu stopped the guest before its console printed: %s", msg)
		}
		select {
		case <-bound.C:
			return fmt.Errorf("the guest printed nothing on its console within %s (qemu.log: %q)", startBound, tailOf(filepath.Join(r.dir, QEMULog), 400))
		case <-r.done:
			if err := r.Err(); err != nil {
				return fmt.Errorf("qemu exited before the guest started: %w", err)
			}
			return errors.New("qemu exited before the guest started")
		case <-ctx.Done():
			return fmt.Errorf("waiting for the guest to start: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

// startBound is how long a guest may take from qemu's start to its
// kernel's first console line: well under a second when the host is
// idle, a few under TCG on a loaded one.
const startBound = time.Minute

// qemuStopped is the line of dir's qemu log that says qemu stopped the
// guest while it lives on itself (a KVM internal error pauses the vCPU),
// or "".
func qemuStopped(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, QEMULog))
	if err != nil {
		return ""
	}
	return stoppedLine(string(b))
}

// stoppedLine is the line of qemu's output that says it stopped the
// guest, or "".
func stoppedLine(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "KVM internal error") || strings.Contains(l, "emulation failure") {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// tailOf is the last n bytes of file, trimmed ("" when unreadable).
func tailOf(file string, n int) string {
	b, _ := os.ReadFile(file)
	return tailString(string(b), n)
}

// tailString is the last n bytes of s, trimmed.
func tailString(s string, n int) string {
	if len(s) > n {
		s = s[len(s)-n:]
	}
	return strings.TrimSpace(s)
}

// Accel is the accelerator the guest runs with.
func (r *Running) Accel() string { return r.accel }

// Exec runs cmd with /bin/sh in the guest, over the shell serial port,
// and returns its output (stdout and stderr together) and exit status.
func (r *Running) Exec(ctx context.Context, cmd string) (string, int, error) {
	return Exec(ctx, r.dir, cmd)
}

// Kill kills qemu (SIGKILL) at once, and its process group.
func (r *Running) Kill() error {
	select {
	case <-r.done:
		return nil
	default:
	}
	err := syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
	if r.pid != 0 && r.pid != r.cmd.Process.Pid {
		_ = syscall.Kill(r.pid, syscall.SIGKILL)
	}
	if err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill machine %s (qemu pid %d): %w", r.name, r.cmd.Process.Pid, err)
	}
	return nil
}

// Stop ends the guest: SIGTERM to the Script's process group in the
// guest (over the shell), whereupon /init powers the guest off; qemu gone
// within timeout, else killed. Later calls return the first one's result.
func (r *Running) Stop(timeout time.Duration) error {
	r.stopOnce.Do(func() {
		select {
		case <-r.done:
			return // powered off or killed already
		default:
		}
		deadline := time.Now().Add(timeout)
		gone := func(until time.Time) bool {
			select {
			case <-r.done:
				return true
			case <-time.After(time.Until(until)):
				return false
			}
		}
		r.stopErr = stop(r.dir, deadline, gone, func(sig syscall.Signal) error {
			return syscall.Kill(-r.cmd.Process.Pid, sig)
		}, r.log)
		if !gone(time.Now().Add(5 * time.Second)) {
			r.stopErr = errors.Join(r.stopErr, fmt.Errorf("stop machine %s: qemu pid %d still there 5s after SIGKILL", r.name, r.pid))
		}
	})
	return r.stopErr
}

// stopScript is the guest command that ends the Script: SIGTERM to its
// process group (its pid is its group: setsid).
const stopScript = `kill -TERM -$(cat ` + guestScriptPid + `)`

// stop asks the guest's shell to end the Script and waits for gone
// until deadline; when the shell does not answer it sends SIGTERM to
// qemu at once (qemu exits on it), and SIGKILL at the deadline.
func stop(dir string, deadline time.Time, gone func(until time.Time) bool, signal func(syscall.Signal) error, log hclog.Logger) error {
	shellWait := min(time.Until(deadline)/2, 10*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), shellWait)
	out, code, err := Exec(ctx, dir, stopScript)
	cancel()
	if err == nil && code == 0 {
		if gone(deadline) {
			return nil
		}
		log.Warn("guest did not power off after its script was stopped: killing qemu", "dir", dir)
	} else {
		log.Debug("guest shell did not stop the script: SIGTERM to qemu", "dir", dir, "error", err, "status", code, "output", strings.TrimSpace(out))
		if err := signal(syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("stop guest in %s: SIGTERM qemu: %w", dir, err)
		}
		if gone(deadline) {
			return nil
		}
	}
	if err := signal(syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stop guest in %s: SIGKILL qemu: %w", dir, err)
	}
	return nil
}

// StopDir stops the guest of a Machine whose Dir is dir, from the
// directory alone (`lab down` after the coordinator was killed): it
// reads PidFile, checks that the pid is qemu running with dir on its
// command line, and stops it as Running.Stop does (the shell if it
// answers, else SIGTERM, then SIGKILL at timeout). Nothing running is
// no error; a pid that is some other process is, and it is left alone.
func StopDir(dir string, timeout time.Duration) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("stop guest in %s: %w", dir, err)
	}
	pid, err := readPid(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("stop guest in %s: %w", dir, err)
	}
	if !alive(pid) {
		return nil
	}
	if err := isOurQEMU(pid, dir); err != nil {
		return fmt.Errorf("stop guest in %s: refusing to signal pid %d: %w", dir, pid, err)
	}
	deadline := time.Now().Add(timeout)
	gone := func(until time.Time) bool {
		for {
			if !alive(pid) {
				return true
			}
			if time.Now().After(until) {
				return false
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	signal := func(sig syscall.Signal) error {
		if err := isOurQEMU(pid, dir); err != nil {
			return nil // gone, and the pid reused
		}
		return syscall.Kill(pid, sig)
	}
	if err := stop(dir, deadline, gone, signal, hclog.NewNullLogger()); err != nil {
		return err
	}
	if !gone(time.Now().Add(5 * time.Second)) {
		return fmt.Errorf("stop guest in %s: qemu pid %d still there 5s after SIGKILL", dir, pid)
	}
	return nil
}

// RunningQEMU is the pid of a qemu that runs a guest in dir, if any (a
// lab down after a killed coordinator lists what it stops).
func RunningQEMU(dir string) (int, bool) {
	pid, err := readPid(dir)
	if err != nil || !alive(pid) || isOurQEMU(pid, dir) != nil {
		return 0, false
	}
	return pid, true
}

func readPid(dir string) (int, error) {
	b, err := os.ReadFile(filepath.Join(dir, PidFile))
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("%s: %q is not a pid", filepath.Join(dir, PidFile), strings.TrimSpace(string(b)))
	}
	return pid, nil
}

// procDir is where process information is read (a test may point it at
// a fixture).
var procDir = "/proc"

// alive reports whether pid is a process that has not exited (a zombie
// has).
func alive(pid int) bool {
	b, err := os.ReadFile(filepath.Join(procDir, strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	// "pid (comm) S ...": the state follows the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || (s[i+2] != 'Z' && s[i+2] != 'X')
}

// isOurQEMU fails unless pid runs qemu-system-* with dir in one of its
// arguments (the chardev and pidfile paths).
func isOurQEMU(pid int, dir string) error {
	b, err := os.ReadFile(filepath.Join(procDir, strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return fmt.Errorf("read its command line: %w", err)
	}
	args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	if len(args) == 0 || !strings.HasPrefix(filepath.Base(args[0]), "qemu-system-") {
		return fmt.Errorf("it is not qemu (command line %q)", strings.Join(args, " "))
	}
	for _, a := range args[1:] {
		if strings.Contains(a, filepath.Join(dir, PidFile)) || strings.Contains(a, "path="+filepath.Join(dir, ShellSock)) {
			return nil
		}
	}
	return fmt.Errorf("it is a qemu of another directory than %s (command line %q)", dir, strings.Join(args, " "))
}

// setupFailure is the message of /init's setup failure line in dir's
// console, or "".
func setupFailure(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, ConsoleLog))
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.Index(s, setupFailed)
	if i < 0 {
		return ""
	}
	msg := s[i+len(setupFailed):]
	if j := strings.IndexAny(msg, "\r\n"); j >= 0 {
		msg = msg[:j]
	}
	return msg
}

// fileTail is the last lines of a log file, for errors.
func fileTail(p string) string {
	b, err := os.ReadFile(p)
	if err != nil || len(strings.TrimSpace(string(b))) == 0 {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return "\n--- " + p + " ---\n" + strings.Join(lines, "\n")
}
