package vmtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/linerate/linerate/cmd/linerate/internal/vm"
)

// Sentinel errors of Guest.Run. The error text always carries the tail of
// the serial console.
var (
	// ErrTimeout is returned when the guest did not finish within its timeout;
	// qemu was killed.
	ErrTimeout = errors.New("guest timed out")
	// ErrNoExit is returned when qemu stopped without the guest printing the
	// script's exit status (kernel panic, init died, qemu failed to start).
	ErrNoExit = errors.New("guest stopped without reporting an exit status")
	// ErrGuestSetup is returned when /init could not prepare the guest (mount,
	// insmod).
	ErrGuestSetup = errors.New("guest setup failed")
)

// Defaults of Guest fields left zero.
const (
	DefaultMemory  = "1G"
	DefaultTimeout = 3 * time.Minute
)

// Guest is one boot of Kernel under qemu (TCG, so no KVM is needed) with
// an initramfs made of busybox, the modules, the files and an /init that
// runs Script and powers off.
type Guest struct {
	Kernel *vm.Kernel
	// Modules are loaded with insmod, with their dependencies, before the
	// script runs (built-in ones are skipped).
	Modules []string
	// Files maps guest paths to host files copied into the initramfs with
	// their permissions (for example a static `go test -c` binary).
	Files map[string]string
	// Script is run by /bin/sh in /tmp (a tmpfs) after setup, with
	// stdin /dev/null and stdout/stderr on the console; its exit status is
	// Result.ExitCode. PATH has every busybox applet.
	Script string
	// QEMUArgs are appended to the qemu command line (NUMA, devices).
	QEMUArgs []string
	// Append is added to the kernel command line.
	Append []string
	Memory string // -m; DefaultMemory when empty
	CPUs   int    // -smp; 1 when 0
	// Timeout bounds the whole boot; DefaultTimeout when 0. qemu is killed
	// when it expires or when the context is done.
	Timeout time.Duration
	// Log gets the qemu command line and, at trace level, every console line.
	Log hclog.Logger
	// Console, when set, receives the serial console as it arrives.
	Console io.Writer
}

// Result is a finished boot.
type Result struct {
	Console  string        // the whole serial console ("\r\n" turned into "\n")
	Output   string        // what the script printed (console between its start and exit markers)
	ExitCode int           // the script's exit status
	Duration time.Duration // from qemu start to qemu exit
}

// Run builds the initramfs in a temporary directory, boots the guest,
// waits for it to power off, and returns the console and the script's
// exit status. A non-zero exit status is not an error; a guest that never
// reports one is (ErrTimeout, ErrNoExit, ErrGuestSetup), with the console
// tail in the message. The temporary files and the qemu process are gone
// when Run returns, on every path.
func (g *Guest) Run(ctx context.Context) (*Result, error) {
	if g.Kernel == nil {
		return nil, errors.New("run guest: Guest.Kernel is nil (use FetchKernel)")
	}
	log := g.Log
	if log == nil {
		log = hclog.NewNullLogger()
	}
	if err := vm.Available(); err != nil {
		return nil, fmt.Errorf("run guest: %w", err)
	}
	qemu, err := exec.LookPath(vm.QEMU)
	if err != nil {
		return nil, fmt.Errorf("run guest: %w", err)
	}
	db, err := g.Kernel.Modules()
	if err != nil {
		return nil, fmt.Errorf("run guest: %w", err)
	}
	mods, err := db.Resolve(g.Modules...)
	if err != nil {
		return nil, fmt.Errorf("run guest: %w", err)
	}
	nonce := make([]byte, 8)
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("run guest: %w", err)
	}
	spec := &initSpec{modules: mods, marker: "@@vmtest:" + hex.EncodeToString(nonce)}

	tmp, err := os.MkdirTemp("", "linerate-vmtest-")
	if err != nil {
		return nil, fmt.Errorf("run guest: %w", err)
	}
	defer os.RemoveAll(tmp)
	initrd := filepath.Join(tmp, "initramfs.cpio")
	if err := spec.initramfs(g).WriteFile(initrd); err != nil {
		return nil, fmt.Errorf("run guest: %w", err)
	}

	res, err := g.boot(ctx, qemu, initrd, spec, mods, log)
	if errors.Is(err, errLockup) {
		log.Warn("the guest kernel locked up (a starved TCG vCPU on a busy host): booting it once more")
		res, err = g.boot(ctx, qemu, initrd, spec, mods, log)
	}
	return res, err
}

// errLockup is returned when the guest reported a soft lockup and was
// stopped early.
var errLockup = errors.New("guest kernel soft lockup")

// boot runs qemu once.
func (g *Guest) boot(ctx context.Context, qemu, initrd string, spec *initSpec, mods []vm.Module, log hclog.Logger) (*Result, error) {
	args := g.qemuArgs(initrd)
	timeout := g.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	log.Debug("booting guest", "modules", vm.ModuleNames(mods), "timeout", timeout,
		"cmd", qemu+" "+strings.Join(args, " "))

	lockup := make(chan struct{})
	con := &consoleBuffer{log: log, tee: g.Console, onLockup: func() { close(lockup); cancel() }}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, qemu, args...)
	cmd.Stdin = nil // /dev/null: no monitor input
	cmd.Stdout = con
	cmd.Stderr = &stderr
	cmd.WaitDelay = 5 * time.Second
	cmd.SysProcAttr = qemuProcAttr()
	start := time.Now()
	runErr := cmd.Run() // kills qemu (SIGKILL to its pid) when ctx is done
	res := &Result{Duration: time.Since(start)}
	con.flush()
	res.Console = cleanConsole(con.String())
	log.Debug("guest stopped", "took", res.Duration.Round(time.Millisecond), "qemu", exitText(runErr))

	code, out, perr := parseConsole(res.Console, spec.marker)
	if perr == nil {
		res.ExitCode, res.Output = code, out
		if runErr != nil {
			log.Warn("qemu did not exit cleanly after the guest reported", "error", runErr, "stderr", strings.TrimSpace(stderr.String()))
		}
		return res, nil
	}
	what := "run guest with kernel " + g.Kernel.Release
	tail := consoleTail(res.Console, stderr.String())
	switch {
	case errors.Is(perr, ErrGuestSetup):
		return res, fmt.Errorf("%s: %w%s", what, perr, tail)
	case isClosed(lockup):
		return res, fmt.Errorf("%s: %w: stopped after %s%s", what, errLockup, res.Duration.Round(time.Second), tail)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return res, fmt.Errorf("%s: %w after %s (timeout %s)%s%s", what, ErrTimeout, res.Duration.Round(time.Second), timeout, hint(res.Console), tail)
	case ctx.Err() != nil:
		return res, fmt.Errorf("%s: %w%s", what, ctx.Err(), tail)
	}
	return res, fmt.Errorf("%s: %w (qemu %s)%s%s", what, ErrNoExit, exitText(runErr), hint(res.Console), tail)
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// qemuArgs is the qemu command line: TCG with every CPU feature, no
// default devices (in particular no default NIC with user networking), the
// serial console on stdout, no reboot (a guest reboot or kernel panic
// ends qemu), then the caller's arguments.
func (g *Guest) qemuArgs(initrd string) []string {
	mem := g.Memory
	if mem == "" {
		mem = DefaultMemory
	}
	cpus := g.CPUs
	if cpus <= 0 {
		cpus = 1
	}
	appendLine := append([]string{"console=ttyS0", "panic=-1", "quiet"}, g.Append...)
	args := []string{
		"-accel", "tcg", "-cpu", "max",
		"-m", mem, "-smp", strconv.Itoa(cpus),
		"-nodefaults", "-no-user-config", "-nographic", "-serial", "stdio", "-no-reboot",
		"-kernel", g.Kernel.Vmlinuz, "-initrd", initrd,
		"-append", strings.Join(appendLine, " "),
	}
	return append(args, g.QEMUArgs...)
}

// parseConsole finds the markers of /init in the console.
func parseConsole(console, marker string) (code int, output string, err error) {
	if i := strings.Index(console, setupFailedPrefix(marker)); i >= 0 {
		msg := console[i+len(setupFailedPrefix(marker)):]
		if j := strings.Index(msg, markerEnd); j >= 0 {
			msg = msg[:j]
		}
		return 0, "", fmt.Errorf("%w: %s", ErrGuestSetup, msg)
	}
	re := regexp.MustCompile(regexp.QuoteMeta(exitMarkerPrefix(marker)) + `(\d+)` + regexp.QuoteMeta(markerEnd))
	loc := re.FindStringSubmatchIndex(console)
	if loc == nil {
		return 0, "", ErrNoExit
	}
	code, err = strconv.Atoi(console[loc[2]:loc[3]])
	if err != nil {
		return 0, "", fmt.Errorf("exit marker %q: %w", console[loc[0]:loc[1]], err)
	}
	out := console[:loc[0]]
	if i := strings.Index(out, startMarker(marker)); i >= 0 {
		out = strings.TrimPrefix(out[i+len(startMarker(marker)):], "\n")
	}
	return code, out, nil
}

// termEscape matches the terminal control sequences SeaBIOS writes to the
// serial port (reset, clear screen, line wrap).
var termEscape = regexp.MustCompile(`\x1b(\[[0-9;?]*[@-~]|[@-Z\\-_]|c)`)

// cleanConsole drops terminal escapes and turns "\r\n" into "\n".
func cleanConsole(s string) string {
	return strings.ReplaceAll(termEscape.ReplaceAllString(s, ""), "\r\n", "\n")
}

const tailLines = 150

// consoleTail is the end of the console (and qemu's stderr) for errors.
func consoleTail(console, stderr string) string {
	lines := strings.Split(strings.TrimRight(console, "\n"), "\n")
	head := fmt.Sprintf("\n--- guest console (%d lines) ---\n", len(lines))
	if len(lines) > tailLines {
		head = fmt.Sprintf("\n--- guest console, last %d of %d lines ---\n", tailLines, len(lines))
		lines = lines[len(lines)-tailLines:]
	}
	s := head + strings.Join(lines, "\n") + "\n--- end of guest console ---"
	if st := strings.TrimSpace(stderr); st != "" {
		s += "\n--- qemu stderr ---\n" + st
	}
	return s
}

// hint names a likely cause seen on the console.
func hint(console string) string {
	switch {
	case strings.Contains(console, "Kernel panic"):
		return " (kernel panic: see console)"
	case strings.TrimSpace(console) == "":
		return " (nothing on the serial console: did the kernel start?)"
	}
	return ""
}

func exitText(err error) string {
	if err == nil {
		return "exited 0"
	}
	return err.Error()
}

// consoleBuffer collects qemu's stdout, copies it to tee and logs it
// line by line at trace level.
type consoleBuffer struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	line []byte
	log  hclog.Logger
	tee  io.Writer
	// onLockup is called (once) when the guest kernel reports a soft
	// lockup: under TCG on an overloaded host a vCPU thread can starve
	// for minutes, and the guest never recovers.
	onLockup func()
}

// lockupSign is what the guest kernel's watchdog prints then.
const lockupSign = "watchdog: BUG: soft lockup"

func (c *consoleBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf.Write(p)
	if c.onLockup != nil && bytes.Contains(c.buf.Bytes(), []byte(lockupSign)) {
		c.onLockup()
		c.onLockup = nil
	}
	if c.tee != nil {
		_, _ = c.tee.Write(p)
	}
	if c.log.IsTrace() {
		c.line = append(c.line, p...)
		for {
			i := bytes.IndexByte(c.line, '\n')
			if i < 0 {
				break
			}
			c.log.Trace("console", "line", strings.TrimRight(string(c.line[:i]), "\r"))
			c.line = c.line[i+1:]
		}
	}
	return len(p), nil
}

func (c *consoleBuffer) flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.line) > 0 && c.log.IsTrace() {
		c.log.Trace("console", "line", strings.TrimRight(string(c.line), "\r"))
	}
	c.line = nil
}

func (c *consoleBuffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}
