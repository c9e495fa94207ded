package vmtest

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/linerate/linerate/cmd/linerate/internal/vm"
)

func TestParseConsole(t *testing.T) {
	const m = "@@vmtest:0123456789abcdef"
	for _, tc := range []struct {
		name, console string
		code          int
		output        string
		err           error
	}{
		{"exit 0", "SeaBIOS\n" + m + ":start@@\nhello\nworld\n" + m + ":exit=0@@\n[ 1.9] reboot: Power down\n", 0, "hello\nworld\n", nil},
		{"exit 3 with kernel noise", m + ":start@@\n[ 2.1] virtio_net virtio0 eth0: renamed\nout\n" + m + ":exit=3@@\n", 3, "[ 2.1] virtio_net virtio0 eth0: renamed\nout\n", nil},
		{"exit 255", m + ":start@@\n" + m + ":exit=255@@", 255, "", nil},
		{"faked by the script without the nonce", m + ":start@@\n@@vmtest:ffffffffffffffff:exit=0@@\n", 0, "", ErrNoExit},
		{"no marker", "Kernel panic - not syncing: Attempted to kill init!\n", 0, "", ErrNoExit},
		{"setup failed", m + ":setup-failed:insmod virtio_net@@\n", 0, "", ErrGuestSetup},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, err := parseConsole(tc.console, m)
			if !errors.Is(err, tc.err) {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			if code != tc.code || out != tc.output {
				t.Errorf("code %d output %q, want %d %q", code, out, tc.code, tc.output)
			}
		})
	}
	if _, _, err := parseConsole(m+":setup-failed:insmod virtio_net@@", m); err == nil || !strings.Contains(err.Error(), "insmod virtio_net") {
		t.Errorf("setup failure does not say what failed: %v", err)
	}
}

func TestRenderInit(t *testing.T) {
	s := renderInit(&initSpec{marker: "@@vmtest:abc", modules: []vm.Module{{Name: "virtio_ring"}, {Name: "virtio"}}})
	for _, want := range []string{
		"#!/bin/busybox sh\n",
		"mount -t devtmpfs devtmpfs /dev",
		"ip link set lo up",
		"insmod /lib/modules/linerate/virtio_ring.ko || fail 'insmod virtio_ring'\ninsmod /lib/modules/linerate/virtio.ko || fail 'insmod virtio'\n",
		"echo '@@vmtest:abc:start@@'\n",
		"/bin/sh /vmtest/script </dev/null\necho '@@vmtest:abc:exit='\"$?\"'@@'\npoweroff -f\n",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("/init lacks %q:\n%s", want, s)
		}
	}
}

func TestQEMUArgs(t *testing.T) {
	g := &Guest{Kernel: &vm.Kernel{Vmlinuz: "/k/vmlinuz"}, QEMUArgs: []string{"-device", "x"}, Append: []string{"loglevel=7"}}
	got := strings.Join(g.qemuArgs("/t/initrd"), " ")
	want := "-accel tcg -cpu max -m 1G -smp 1 -nodefaults -no-user-config -nographic -serial stdio -no-reboot " +
		"-kernel /k/vmlinuz -initrd /t/initrd -append console=ttyS0 panic=-1 quiet loglevel=7 -device x"
	if got != want {
		t.Errorf("qemu args\n got %s\nwant %s", got, want)
	}
	g.Memory, g.CPUs = "2G", 4
	if args := g.qemuArgs("i"); !slices.Contains(args, "2G") || !slices.Contains(args, "4") {
		t.Errorf("memory and CPUs not passed: %v", args)
	}
}

func TestConsoleTail(t *testing.T) {
	var lines []string
	for i := range 200 {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	s := consoleTail(strings.Join(lines, "\n")+"\n", "qemu: bad option\n")
	if !strings.Contains(s, "last 150 of 200 lines") || !strings.Contains(s, lines[199]) || strings.Contains(s, "\n"+lines[49]+"\n") ||
		!strings.Contains(s, "--- qemu stderr ---\nqemu: bad option") {
		t.Errorf("tail:\n%s", s)
	}
}

// The initramfs refuses a file that would replace the script, and names it.
func TestInitramfsRejectsCollision(t *testing.T) {
	fake := filepath.Join(t.TempDir(), "fake")
	if err := os.WriteFile(fake, []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	g := &Guest{Kernel: &vm.Kernel{Busybox: fake}, Files: map[string]string{guestScript: fake}}
	err := (&initSpec{marker: "@@vmtest:0"}).initramfs(g).Write(io.Discard)
	if err == nil || !strings.Contains(err.Error(), "already in the archive") || !strings.Contains(err.Error(), guestScript[1:]) {
		t.Errorf("file at %s: %v, want a collision error naming it", guestScript, err)
	}
}

func TestCleanConsole(t *testing.T) {
	in := "\x1bc\x1b[?7l\x1b[2J\x1b[0mSeaBIOS (version 1.16.2)\r\nBooting from ROM..\x1bc\x1b[?7l\x1b[2J@@m:start@@\r\nok\r\n"
	if got, want := cleanConsole(in), "SeaBIOS (version 1.16.2)\nBooting from ROM..@@m:start@@\nok\n"; got != want {
		t.Errorf("cleanConsole = %q, want %q", got, want)
	}
}

// A soft lockup on the guest console stops the boot early (once).
func TestConsoleLockup(t *testing.T) {
	calls := 0
	c := &consoleBuffer{log: hclog.NewNullLogger(), onLockup: func() { calls++ }}
	c.Write([]byte("[ 1.0] booting\n[ 48.6] watchdog: BUG: soft lo"))
	if calls != 0 {
		t.Fatal("lockup reported before the whole sign arrived")
	}
	c.Write([]byte("ckup - CPU#1 stuck for 45s!\n"))
	c.Write([]byte("[ 76.6] watchdog: BUG: soft lockup - CPU#1 stuck for 71s!\n"))
	if calls != 1 {
		t.Fatalf("onLockup called %d times, want 1", calls)
	}
}
