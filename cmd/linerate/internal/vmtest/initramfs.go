package vmtest

import (
	"fmt"
	"strings"

	"github.com/linerate/linerate/cmd/linerate/internal/vm"
)

// guestScript is where the initramfs keeps the caller's script.
const guestScript = "/vmtest/script"

// initSpec is what /init of one boot needs.
type initSpec struct {
	modules []vm.Module // in load order
	marker  string      // "@@vmtest:<nonce>" prefix of the console markers
}

// initramfs is the archive of a boot of g: busybox, the modules, g's
// files, the script and /init.
func (s *initSpec) initramfs(g *Guest) *vm.Initramfs {
	return &vm.Initramfs{
		Busybox:   g.Kernel.Busybox,
		Modules:   s.modules,
		Files:     g.Files,
		Generated: map[string]string{guestScript: g.Script},
		Init:      renderInit(s),
	}
}

// Console markers /init prints around the script; the nonce in the
// prefix m makes them impossible for the script's output to fake by accident.
func startMarker(m string) string       { return m + ":start@@" }
func exitMarkerPrefix(m string) string  { return m + ":exit=" }
func setupFailedPrefix(m string) string { return m + ":setup-failed:" }

const markerEnd = "@@"

// renderInit writes /init: mount the pseudo filesystems, lo up, load the
// modules, run the script, print its exit status, power off. Any setup
// failure prints a setup-failed marker and powers off.
func renderInit(s *initSpec) string {
	q := vm.ShellQuote
	var b strings.Builder
	b.WriteString(`#!/bin/busybox sh
/bin/busybox --install -s
export PATH=/sbin:/usr/sbin:/bin:/usr/bin HOME=/tmp TMPDIR=/tmp
fail() { echo ` + q(setupFailedPrefix(s.marker)) + `"$*"` + q(markerEnd) + `; poweroff -f; sleep 60; }
mount -t proc proc /proc || fail "mount /proc"
mount -t sysfs sysfs /sys || fail "mount /sys"
mount -t devtmpfs devtmpfs /dev || fail "mount /dev"
mount -t tmpfs -o mode=1777 tmpfs /tmp || fail "mount /tmp"
ip link set lo up || fail "ip link set lo up"
`)
	for _, m := range s.modules {
		fmt.Fprintf(&b, "insmod %s || fail %s\n", vm.ModuleGuestPath(m), q("insmod "+m.Name))
	}
	b.WriteString(`echo ` + q(startMarker(s.marker)) + `
cd /tmp
/bin/sh ` + guestScript + ` </dev/null
echo ` + q(exitMarkerPrefix(s.marker)) + `"$?"` + q(markerEnd) + `
poweroff -f
sleep 60
`)
	return b.String()
}
