//go:build linux

package lab

import (
	"context"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// GuestFiles takes a command name or a path to an executable of this
// machine, and refuses one that would replace a file the guest has
// (busybox's /bin/sh) by name; Exec names a lab with no running guest.
func TestGuestFiles(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("reads x86-64 executables of this machine")
	}
	ls, err := exec.LookPath("ls")
	if err != nil {
		t.Skip("no ls")
	}
	got, err := GuestFiles([]string{"ls"})
	abs, _ := filepath.Abs(ls)
	if err != nil || len(got) != 1 || got[0] != abs {
		t.Errorf("GuestFiles(ls) = %v, %v; want [%s]", got, err, abs)
	}
	files, err := AgentOptions{GuestFiles: got}.guestFiles()
	if err != nil || files[abs] != abs || len(files) < 3 {
		t.Errorf("ls's guest files %v, %v: want ls itself, its interpreter and libraries", files, err)
	}
	if sh, err := filepath.EvalSymlinks("/bin/sh"); err == nil && !strings.Contains(sh, "busybox") {
		_, err := GuestFiles([]string{"/bin/sh"})
		if err == nil || !strings.Contains(err.Error(), "guest file /bin/sh: needs /bin/sh, which is the guest's busybox initramfs's own") {
			t.Errorf("GuestFiles(/bin/sh): %v, want it refused as busybox's", err)
		}
	}
	if _, err := GuestFiles([]string{""}); err == nil || !strings.Contains(err.Error(), `guest file "": want an executable's path or command name`) {
		t.Errorf("GuestFiles(\"\"): %v", err)
	}
	_, _, err = Exec(context.Background(), "nolab0", "s1", "true")
	if err == nil || !strings.Contains(err.Error(), "lab nolab0: s1 is not one of its running VM hosts (it has none: no /run/linerate/lab-nolab0") {
		t.Errorf("Exec in a lab that is not up: %v", err)
	}
	if _, _, err := Exec(context.Background(), "nolab0", "../x", "true"); err == nil || !strings.Contains(err.Error(), `host "../x": want a host name`) {
		t.Errorf("Exec on host ../x: %v", err)
	}
}
