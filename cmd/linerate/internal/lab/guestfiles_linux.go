//go:build linux

package lab

import (
	"fmt"
	"maps"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/linerate/linerate/cmd/linerate/internal/vm"
	"github.com/linerate/linerate/internal/cluster/bundle"
)

// guestFiles are the VM hosts' extra files (AgentOptions.GuestFiles):
// guest path → host file, each executable at its own path with its
// interpreter and shared libraries (vm.ELFFiles). A path the guest has
// already — busybox's, /init, or what the lab gives its agent — is
// refused by name, as is a file that is not an executable ELF or whose
// libraries the guest's loader would not find.
func (o AgentOptions) guestFiles() (map[string]string, error) {
	out := map[string]string{}
	for _, f := range o.GuestFiles {
		files, err := vm.ELFFiles("/", f)
		if err != nil {
			return nil, err
		}
		for g := range files {
			if reason := ownGuestPath(g); reason != "" {
				return nil, fmt.Errorf("guest file %s: needs %s, which is %s", f, g, reason)
			}
		}
		maps.Copy(out, files)
	}
	return out, nil
}

// GuestFiles are the executables given to a lab (`lab up --guest-file`)
// as AgentOptions.GuestFiles takes them, checked as a lab that is given
// them checks them before it builds anything: each an absolute path, a
// name without a slash looked up in PATH as a shell would.
func GuestFiles(given []string) ([]string, error) {
	out := make([]string, len(given))
	for i, g := range given {
		p := g
		if g == "" {
			return nil, fmt.Errorf("guest file %q: want an executable's path or command name", g)
		}
		if !strings.ContainsRune(g, '/') {
			var err error
			if p, err = exec.LookPath(g); err != nil {
				return nil, fmt.Errorf("guest file %q: no such command in PATH: %w", g, err)
			}
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, fmt.Errorf("guest file %q: %w", g, err)
		}
		out[i] = abs
	}
	if _, err := (AgentOptions{GuestFiles: out}).guestFiles(); err != nil {
		return nil, err
	}
	return out, nil
}

// ownGuestPath says whose a guest path is when the initramfs or the lab
// has a file there already, else "".
func ownGuestPath(g string) string {
	switch {
	case slices.Contains([]string{"/init", "/bin/busybox", "/bin/sh"}, g):
		return "the guest's busybox initramfs's own"
	case g == guestBinary || strings.HasPrefix(g, bundle.ConfigDir+"/") || strings.HasPrefix(g, path.Clean(vm.GuestModulesDir)+"/"):
		return "the lab's own (its agent's binary, its /etc/linerate bundle and modules)"
	}
	return ""
}
