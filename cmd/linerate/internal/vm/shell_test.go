package vm

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeShell serves the framing of shellLoop on dir's ShellSock: it
// ignores the first ignore pings (a guest still booting), writes stale
// replies of another nonce first, and answers exec with run's output.
func fakeShell(t *testing.T, dir string, ignore int, run func(cmd string) (string, int)) {
	t.Helper()
	l, err := net.Listen("unix", filepath.Join(dir, ShellSock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			sc := bufio.NewScanner(c)
			for sc.Scan() {
				f := strings.Fields(sc.Text())
				switch {
				case len(f) == 2 && f[0] == "ping":
					if ignore > 0 {
						ignore--
						continue
					}
					fmt.Fprintf(c, "ping %s\r\n@@ffff:pong@@\n@@%s:pong@@\n", f[1], f[1])
				case len(f) == 3 && f[0] == "exec":
					cmd, _ := base64.StdEncoding.DecodeString(f[2])
					out, rc := run(string(cmd))
					fmt.Fprintf(c, "@@ffff:out@@eA==@@ffff:rc=9@@\n@@%s:out@@%s@@%s:rc=%d@@\n", f[1], base64.StdEncoding.EncodeToString([]byte(out)), f[1], rc)
				}
			}
			c.Close()
		}
	}()
}

func TestExecFraming(t *testing.T) {
	dir := t.TempDir()
	fakeShell(t, dir, 2, func(cmd string) (string, int) {
		return "ran " + cmd + "\n\x00binary\r\n@@not-a-marker@@", 3
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for range 2 {
		out, code, err := Exec(ctx, dir, "cat /proc/interrupts | grep 'virtio'")
		if err != nil {
			t.Fatal(err)
		}
		if want := "ran cat /proc/interrupts | grep 'virtio'\n\x00binary\r\n@@not-a-marker@@"; out != want || code != 3 {
			t.Errorf("Exec = %q, %d; want %q, 3", out, code, want)
		}
	}
}

// A shell that never answers: Exec ends with ctx, saying so.
func TestExecTimeout(t *testing.T) {
	dir := t.TempDir()
	fakeShell(t, dir, 1<<30, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 1200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, err := Exec(ctx, dir, "true")
	if err == nil || !strings.Contains(err.Error(), "deadline exceeded") || !strings.Contains(err.Error(), dir) {
		t.Errorf("Exec against a silent shell: %v", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Exec returned %s after a 1.2s timeout", took)
	}
	// No socket at all (no guest): the same, not a hang.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	if _, _, err := Exec(ctx2, t.TempDir(), "true"); err == nil {
		t.Error("Exec without a guest succeeded")
	}
}
