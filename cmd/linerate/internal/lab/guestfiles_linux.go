//go:build linux

package lab

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/linerate/linerate/cmd/linerate/internal/vm"
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

// CheckGuestFiles checks executables for AgentOptions.GuestFiles, as
// a lab that is given them does before it builds anything.
func CheckGuestFiles(files []string) error {
	_, err := AgentOptions{GuestFiles: files}.guestFiles()
	return err
}

// ownGuestPath says whose a guest path is when the initramfs or the lab
// has a file there already, else "".
func ownGuestPath(g string) string {
	switch {
	case slices.Contains([]string{"/init", "/bin/busybox", "/bin/sh"}, g):
		return "the guest's busybox initramfs's own"
	case g == guestBinary || g == guestKey || strings.HasPrefix(g, guestTLSDir+"/") || strings.HasPrefix(g, path.Clean(vm.GuestModulesDir)+"/"):
		return "the lab's own (its agent's binary, keys and modules)"
	}
	return ""
}
