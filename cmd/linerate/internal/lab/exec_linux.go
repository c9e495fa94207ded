//go:build linux

package lab

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/linerate/linerate/cmd/linerate/internal/vm"
)

// Exec runs cmd with /bin/sh in the guest of VM host host of the lab
// name that `lab up --hosts vm` keeps, as root, from this process or any
// other (over the guest's shell port in the lab directory, one command
// at a time per guest), and returns its output (stdout and stderr
// together) and exit status. A host that is not a running guest of the
// lab is an error naming the ones that are.
func Exec(ctx context.Context, name, host, cmd string) (string, int, error) {
	if err := CheckName(name); err != nil {
		return "", 0, err
	}
	dir := DefaultDir(name)
	hostDir := filepath.Join(dir, host)
	if strings.ContainsRune(host, '/') || host == "" || host == "." || host == ".." {
		return "", 0, fmt.Errorf("lab %s: host %q: want a host name such as s1 or r1", name, host)
	}
	if _, ok := vm.RunningQEMU(hostDir); !ok {
		return "", 0, fmt.Errorf("lab %s: %s is not one of its running VM hosts (%s)", name, host, runningVMHosts(dir))
	}
	out, rc, err := vm.Exec(ctx, hostDir, cmd)
	if err != nil {
		return out, rc, fmt.Errorf("lab %s: VM host %s: %w", name, host, err)
	}
	return out, rc, nil
}

// runningVMHosts says which hosts of the lab directory dir are running
// guests.
func runningVMHosts(dir string) string {
	pids, _ := filepath.Glob(filepath.Join(dir, "*", vm.PidFile))
	var hosts []string
	for _, p := range pids {
		if _, ok := vm.RunningQEMU(filepath.Dir(p)); ok {
			hosts = append(hosts, filepath.Base(filepath.Dir(p)))
		}
	}
	if len(hosts) == 0 {
		if _, err := os.Stat(dir); err != nil {
			return "it has none: no " + dir + "; is it up, with --hosts vm?"
		}
		return "it has none running"
	}
	return "running: " + strings.Join(hosts, ", ")
}
