package vmtest

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"
)

// Guest paths of the harness's own initramfs entries.
const (
	guestScript     = "/vmtest/script"
	guestModulesDir = "/lib/modules/vmtest"
)

// initSpec is what goes into one initramfs.
type initSpec struct {
	busybox string   // host path of the static busybox
	modules []Module // in load order
	files   map[string]string
	script  string
	marker  string // "@@vmtest:<nonce>" prefix of the console markers
}

// Console markers /init prints around the script; the nonce in the
// prefix m makes them impossible for the script's output to fake by accident.
func startMarker(m string) string       { return m + ":start@@" }
func exitMarkerPrefix(m string) string  { return m + ":exit=" }
func setupFailedPrefix(m string) string { return m + ":setup-failed:" }

const markerEnd = "@@"

func shellQuote(s string) string      { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
func moduleGuestPath(m Module) string { return guestModulesDir + "/" + m.Name + ".ko" }

// renderInit writes /init: mount the pseudo filesystems, lo up, load the
// modules, run the script, print its exit status, power off. Any setup
// failure prints a setup-failed marker and powers off.
func renderInit(s *initSpec) string {
	var b strings.Builder
	b.WriteString(`#!/bin/busybox sh
/bin/busybox --install -s
export PATH=/sbin:/usr/sbin:/bin:/usr/bin HOME=/tmp TMPDIR=/tmp
fail() { echo ` + shellQuote(setupFailedPrefix(s.marker)) + `"$*"` + shellQuote(markerEnd) + `; poweroff -f; sleep 60; }
mount -t proc proc /proc || fail "mount /proc"
mount -t sysfs sysfs /sys || fail "mount /sys"
mount -t devtmpfs devtmpfs /dev || fail "mount /dev"
mount -t tmpfs -o mode=1777 tmpfs /tmp || fail "mount /tmp"
ip link set lo up || fail "ip link set lo up"
`)
	for _, m := range s.modules {
		fmt.Fprintf(&b, "insmod %s || fail %s\n", moduleGuestPath(m), shellQuote("insmod "+m.Name))
	}
	b.WriteString(`echo ` + shellQuote(startMarker(s.marker)) + `
cd /tmp
/bin/sh ` + guestScript + ` </dev/null
echo ` + shellQuote(exitMarkerPrefix(s.marker)) + `"$?"` + shellQuote(markerEnd) + `
poweroff -f
sleep 60
`)
	return b.String()
}

// writeInitramfs writes the uncompressed newc archive of s to w.
func writeInitramfs(w io.Writer, s *initSpec) error {
	c := NewCPIOWriter(w)
	for _, d := range []string{"/bin", "/sbin", "/usr/bin", "/usr/sbin", "/proc", "/sys", "/dev", "/etc", "/root", "/vmtest", guestModulesDir} {
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
	if err := addHostFile(c, "/bin/busybox", s.busybox); err != nil {
		return err
	}
	if err := c.Symlink("/bin/sh", "busybox"); err != nil {
		return err
	}
	if err := c.File("/init", 0o755, []byte(renderInit(s))); err != nil {
		return err
	}
	if err := c.File(guestScript, 0o644, []byte(s.script)); err != nil {
		return err
	}
	for _, m := range s.modules {
		obj, err := ReadModule(m.Path)
		if err != nil {
			return err
		}
		if err := c.File(moduleGuestPath(m), 0o644, obj); err != nil {
			return err
		}
	}
	guestPaths := make([]string, 0, len(s.files))
	for gp := range s.files {
		guestPaths = append(guestPaths, gp)
	}
	sort.Strings(guestPaths)
	for _, gp := range guestPaths {
		if err := addHostFile(c, gp, s.files[gp]); err != nil {
			return err
		}
	}
	return c.Close()
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
