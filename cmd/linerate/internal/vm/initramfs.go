package vm

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"
)

// GuestModulesDir is where an initramfs keeps its modules.
const GuestModulesDir = "/lib/modules/linerate"

// Initramfs is what goes into one initramfs: busybox, the modules, the
// caller's host files, the generated files and /init.
type Initramfs struct {
	Busybox string   // host path of the static busybox: /bin/busybox, with /bin/sh linked to it
	Modules []Module // at ModuleGuestPath, uncompressed
	// Files maps guest paths to host files copied with their permissions.
	Files map[string]string
	// Generated maps guest paths to contents (mode 0644), for example the
	// script /init runs.
	Generated map[string]string
	Init      string // the /init script (mode 0755)
}

// ShellQuote quotes s for a POSIX shell.
func ShellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// ModuleGuestPath is where the initramfs puts module m.
func ModuleGuestPath(m Module) string { return GuestModulesDir + "/" + m.Name + ".ko" }

// ModuleNames are the names of mods, in order.
func ModuleNames(mods []Module) []string {
	out := make([]string, len(mods))
	for i, m := range mods {
		out[i] = m.Name
	}
	return out
}

// WriteFile writes the archive to a new file p (it must not exist).
func (s *Initramfs) WriteFile(p string) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("write initramfs: %w", err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := s.Write(bw); err != nil {
		f.Close()
		return fmt.Errorf("write initramfs %s: %w", p, err)
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("write initramfs %s: %w", p, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write initramfs %s: %w", p, err)
	}
	return nil
}

// Write writes the uncompressed newc archive to w. A file or generated
// entry at a path the archive already has (/init, /bin/busybox, a
// module) is an error naming it.
func (s *Initramfs) Write(w io.Writer) error {
	c := NewCPIOWriter(w)
	for _, d := range []string{"/bin", "/sbin", "/usr/bin", "/usr/sbin", "/proc", "/sys", "/dev", "/etc", "/root", "/run", GuestModulesDir} {
		if err := c.Dir(d, 0o755); err != nil {
			return err
		}
	}
	if err := c.Dir("/tmp", fs.ModeSticky|0o777); err != nil {
		return err
	}
	// The kernel opens /dev/console for init before devtmpfs is mounted.
	if err := c.CharDev("/dev/console", 0o600, 5, 1); err != nil {
		return err
	}
	if err := c.CharDev("/dev/null", 0o666, 1, 3); err != nil {
		return err
	}
	if err := addHostFile(c, "/bin/busybox", s.Busybox); err != nil {
		return err
	}
	if err := c.Symlink("/bin/sh", "busybox"); err != nil {
		return err
	}
	if err := c.File("/init", 0o755, []byte(s.Init)); err != nil {
		return err
	}
	for _, gp := range sortedKeys(s.Generated) {
		if err := c.File(gp, 0o644, []byte(s.Generated[gp])); err != nil {
			return err
		}
	}
	for _, m := range s.Modules {
		obj, err := ReadModule(m.Path)
		if err != nil {
			return err
		}
		if err := c.File(ModuleGuestPath(m), 0o644, obj); err != nil {
			return err
		}
	}
	for _, gp := range sortedKeys(s.Files) {
		if err := addHostFile(c, gp, s.Files[gp]); err != nil {
			return err
		}
	}
	return c.Close()
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// addHostFile copies a host file into the archive, keeping its permissions.
func addHostFile(c *CPIOWriter, guestPath, hostPath string) error {
	f, err := os.Open(hostPath)
	if err != nil {
		return fmt.Errorf("add %s to initramfs as %s: %w", hostPath, guestPath, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("add %s to initramfs as %s: %w", hostPath, guestPath, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("add %s to initramfs as %s: not a regular file", hostPath, guestPath)
	}
	if err := c.FileFrom(guestPath, fi.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky), f, fi.Size()); err != nil {
		return fmt.Errorf("add %s to initramfs: %w", hostPath, err)
	}
	return nil
}
