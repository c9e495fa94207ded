package choose

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/linerate/linerate/pktgen"
)

// ErrNotRoot is returned when loading a kernel module needs root and the
// caller is not root.
var ErrNotRoot = errors.New("not root")

// Runner runs a program and returns its standard output and standard
// error, combined.
type Runner func(ctx context.Context, name string, args ...string) ([]byte, error)

// ExecRunner is the Runner of the live host: os/exec.
func ExecRunner(ctx context.Context, name string, args ...string) ([]byte, error) {
	return exec.CommandContext(ctx, name, args...).CombinedOutput()
}

// ModuleLoader loads the pktgen module with modprobe(8), for
// Options.LoadModule of a command run on the host. Its zero value runs
// modprobe on the live host.
type ModuleLoader struct {
	// Run runs modprobe (nil: ExecRunner).
	Run Runner
	// Euid is the effective user id (nil: os.Geteuid).
	Euid func() int
	// ProcDir must exist once the module is loaded ("":
	// pktgen.DefaultProcDir). It is missing in a network namespace other
	// than the first, where the module loads but shows nothing.
	ProcDir string
}

// Load runs `modprobe pktgen` when the process is root and checks that
// ProcDir appeared. For any other user it returns ErrNotRoot.
func (m ModuleLoader) Load(ctx context.Context) error {
	euid, run, dir := os.Geteuid, ExecRunner, pktgen.DefaultProcDir
	if m.Euid != nil {
		euid = m.Euid
	}
	if m.Run != nil {
		run = m.Run
	}
	if m.ProcDir != "" {
		dir = m.ProcDir
	}
	if euid() != 0 {
		return ErrNotRoot
	}
	out, err := run(ctx, "modprobe", "pktgen")
	if msg := strings.TrimSpace(string(out)); err != nil && msg != "" {
		return fmt.Errorf("modprobe pktgen: %w: %s", err, msg)
	} else if err != nil {
		return fmt.Errorf("modprobe pktgen: %w", err)
	}
	if _, err := os.Stat(dir); err != nil {
		return fmt.Errorf("modprobe pktgen: %w", err)
	}
	return nil
}
