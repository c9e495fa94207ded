package vm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// cpioEntry is one parsed newc entry.
type cpioEntry struct {
	Name   string
	Ino    uint32
	Mode   uint32
	NLink  uint32
	RMajor uint32
	RMinor uint32
	Data   string
}

// readNewc parses a newc archive strictly: magic, hex fields, name size
// with its NUL, 4-byte alignment of headers and data, zero padding, and
// a final TRAILER!!! followed by nothing but padding.
func readNewc(t *testing.T, b []byte) []cpioEntry {
	t.Helper()
	var out []cpioEntry
	off := 0
	for {
		if off%4 != 0 {
			t.Fatalf("entry at offset %d not 4-aligned", off)
		}
		if off+110 > len(b) {
			t.Fatalf("truncated header at %d", off)
		}
		h := string(b[off : off+110])
		if h[:6] != "070701" {
			t.Fatalf("bad magic %q at %d", h[:6], off)
		}
		field := func(i int) uint32 {
			v, err := strconv.ParseUint(h[6+8*i:14+8*i], 16, 32)
			if err != nil {
				t.Fatalf("header at %d field %d: %v", off, i, err)
			}
			return uint32(v)
		}
		e := cpioEntry{Ino: field(0), Mode: field(1), NLink: field(4), RMajor: field(9), RMinor: field(10)}
		if uid, gid, mtime, check := field(2), field(3), field(5), field(12); uid != 0 || gid != 0 || mtime != 0 || check != 0 {
			t.Fatalf("header at %d: uid %d gid %d mtime %d check %d, want zeros", off, uid, gid, mtime, check)
		}
		size, namesize := int(field(6)), int(field(11))
		nameEnd := off + 110 + namesize
		if namesize < 1 || nameEnd > len(b) || b[nameEnd-1] != 0 {
			t.Fatalf("header at %d: bad name size %d", off, namesize)
		}
		e.Name = string(b[off+110 : nameEnd-1])
		dataOff := (nameEnd + 3) &^ 3
		checkZero(t, b[nameEnd:dataOff], "name padding of "+e.Name)
		if dataOff+size > len(b) {
			t.Fatalf("entry %s: data past the end", e.Name)
		}
		e.Data = string(b[dataOff : dataOff+size])
		off = (dataOff + size + 3) &^ 3
		checkZero(t, b[dataOff+size:min(off, len(b))], "data padding of "+e.Name)
		if e.Name == "TRAILER!!!" {
			checkZero(t, b[min(off, len(b)):], "after the trailer")
			return out
		}
		out = append(out, e)
	}
}

func checkZero(t *testing.T, b []byte, what string) {
	t.Helper()
	for _, c := range b {
		if c != 0 {
			t.Fatalf("%s: non-zero byte", what)
		}
	}
}

func TestCPIOWriterRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	c := NewCPIOWriter(&buf)
	steps := []error{
		c.Dir("/etc", 0o755),
		c.File("/etc/hello", 0o640, []byte("hello\n")),
		c.File("bin/empty", 0o755, nil),
		c.Symlink("/bin/sh", "busybox"),
		c.CharDev("/dev/console", 0o600, 5, 1),
		c.File("/a/b/c/deep.txt", 0o644, []byte("abc")),
		c.Dir("/tmp", 0o1777),
		c.Dir("/a/b", 0o700), // already made as a parent: no second entry
		c.File("/bin/suid", fs.ModeSetuid|0o755, []byte("s")),
	}
	for n := 1; n <= 7; n++ { // every padding length
		steps = append(steps, c.File(fmt.Sprintf("/pad/%d", n), 0o644, bytes.Repeat([]byte{'x'}, n)))
	}
	steps = append(steps, c.FileFrom("/from/reader", 0o600, strings.NewReader("streamed"), 8), c.Close())
	if err := errors.Join(steps...); err != nil {
		t.Fatal(err)
	}
	got := readNewc(t, buf.Bytes())
	want := []cpioEntry{
		{Name: "etc", Mode: 0o040755, NLink: 2},
		{Name: "etc/hello", Mode: 0o100640, NLink: 1, Data: "hello\n"},
		{Name: "bin", Mode: 0o040755, NLink: 2},
		{Name: "bin/empty", Mode: 0o100755, NLink: 1},
		{Name: "bin/sh", Mode: 0o120777, NLink: 1, Data: "busybox"},
		{Name: "dev", Mode: 0o040755, NLink: 2},
		{Name: "dev/console", Mode: 0o020600, NLink: 1, RMajor: 5, RMinor: 1},
		{Name: "a", Mode: 0o040755, NLink: 2},
		{Name: "a/b", Mode: 0o040755, NLink: 2},
		{Name: "a/b/c", Mode: 0o040755, NLink: 2},
		{Name: "a/b/c/deep.txt", Mode: 0o100644, NLink: 1, Data: "abc"},
		{Name: "tmp", Mode: 0o041777, NLink: 2},
		{Name: "bin/suid", Mode: 0o104755, NLink: 1, Data: "s"},
		{Name: "pad", Mode: 0o040755, NLink: 2},
	}
	for n := 1; n <= 7; n++ {
		want = append(want, cpioEntry{Name: fmt.Sprintf("pad/%d", n), Mode: 0o100644, NLink: 1, Data: strings.Repeat("x", n)})
	}
	want = append(want, cpioEntry{Name: "from", Mode: 0o040755, NLink: 2},
		cpioEntry{Name: "from/reader", Mode: 0o100600, NLink: 1, Data: "streamed"})
	for i := range want {
		want[i].Ino = uint32(i + 1)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("archive entries (-want +got):\n%s", diff)
	}
}

// TestCPIOWithGNUCpio extracts an archive with GNU cpio (apt package
// cpio), the reference reader, when it is installed.
func TestCPIOWithGNUCpio(t *testing.T) {
	tool, err := exec.LookPath("cpio")
	if err != nil {
		t.Skip("cpio not installed (apt-get install cpio): the Go reader above still checks the format")
	}
	var buf bytes.Buffer
	c := NewCPIOWriter(&buf)
	big := bytes.Repeat([]byte("0123456789abcdef"), 4097) // not a multiple of 4 KiB blocks
	if err := errors.Join(
		c.File("/bin/tool", 0o755, []byte("#!/bin/sh\necho hi\n")),
		c.Symlink("/bin/alias", "tool"),
		c.File("/data/big", 0o600, big[:len(big)-3]),
		c.Dir("/empty", 0o700),
		c.Close(),
	); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cmd := exec.Command(tool, "-i", "-d", "-m", "--quiet", "--no-absolute-filenames")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(buf.Bytes())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cpio -i: %v: %s", err, out)
	}
	check := func(name string, mode os.FileMode, data []byte) {
		t.Helper()
		p := filepath.Join(dir, name)
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if fi.Mode() != mode {
			t.Errorf("%s: mode %v, want %v", name, fi.Mode(), mode)
		}
		if data != nil {
			if b, _ := os.ReadFile(p); !bytes.Equal(b, data) {
				t.Errorf("%s: content differs (%d bytes, want %d)", name, len(b), len(data))
			}
		}
	}
	check("bin/tool", 0o755, []byte("#!/bin/sh\necho hi\n"))
	check("data/big", 0o600, big[:len(big)-3])
	check("empty", os.ModeDir|0o700, nil)
	if target, err := os.Readlink(filepath.Join(dir, "bin/alias")); err != nil || target != "tool" {
		t.Errorf("bin/alias: %q, %v; want a symlink to tool", target, err)
	}
}

func TestCPIOWriterErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		do   func(c *CPIOWriter) error
		want string
	}{
		{"duplicate", func(c *CPIOWriter) error {
			return errors.Join(c.File("/x", 0o644, nil), c.File("x", 0o644, nil))
		}, `"x": already in the archive`},
		{"file as parent", func(c *CPIOWriter) error {
			return errors.Join(c.File("/x", 0o644, nil), c.File("/x/y", 0o644, nil))
		}, `parent "x" is already in the archive and is not a directory`},
		{"empty name", func(c *CPIOWriter) error { return c.File("", 0o644, nil) }, "non-empty path"},
		{"root", func(c *CPIOWriter) error { return c.Dir("/", 0o755) }, "archive root"},
		{"dotdot stays inside", func(c *CPIOWriter) error { return c.File("../../etc/x", 0o644, nil) }, ""},
		{"short reader", func(c *CPIOWriter) error {
			return c.FileFrom("/short", 0o644, strings.NewReader("12345"), 10)
		}, "copy 10 bytes (got 5): unexpected EOF"},
		{"after close", func(c *CPIOWriter) error {
			return errors.Join(c.Close(), c.File("/late", 0o644, nil))
		}, "already closed"},
		{"empty symlink", func(c *CPIOWriter) error { return c.Symlink("/l", "") }, "empty target"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.do(NewCPIOWriter(io.Discard))
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestCleanName(t *testing.T) {
	for in, want := range map[string]string{"/bin/sh": "bin/sh", "bin/sh": "bin/sh", "/a//b/": "a/b", "../../etc/x": "etc/x", "./x": "x"} {
		if got, err := cleanName(in); err != nil || got != want {
			t.Errorf("cleanName(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
