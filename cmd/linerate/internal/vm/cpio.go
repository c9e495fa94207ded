package vm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
)

// CPIOWriter writes a cpio archive in the "newc" format (magic 070701),
// the format the Linux kernel unpacks as an initramfs. Entries get
// increasing inode numbers, uid/gid 0 and mtime 0, so an archive is a
// function of its contents. Parent directories are created on demand
// (mode 0755) because the kernel's unpacker does not create them; an
// explicit Dir after its implicit creation is an error.
type CPIOWriter struct {
	w    io.Writer
	ino  uint32
	seen map[string]bool // every name written, directories included
	dirs map[string]bool
	err  error
}

// NewCPIOWriter returns a writer of a newc archive to w. Close writes the
// trailer; w is not closed.
func NewCPIOWriter(w io.Writer) *CPIOWriter {
	return &CPIOWriter{w: w, ino: 1, seen: map[string]bool{}, dirs: map[string]bool{"": true}}
}

// File modes of the newc header (S_IF* of stat(2)).
const (
	cpioModeDir     = 0o040000
	cpioModeFile    = 0o100000
	cpioModeSymlink = 0o120000
	cpioModeCharDev = 0o020000
)

// unixPerm is the permission part of a stat(2) mode: the rwx bits plus
// setuid, setgid and sticky, given either as Go's fs.ModeSetuid,
// fs.ModeSetgid, fs.ModeSticky or as the octal bits (0o1777).
func unixPerm(m fs.FileMode) uint32 {
	p := uint32(m.Perm()) | uint32(m)&0o7000
	if m&fs.ModeSetuid != 0 {
		p |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		p |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		p |= 0o1000
	}
	return p
}

// cleanName turns "/bin/sh" or "bin/sh" into "bin/sh" and rejects names
// that escape the archive root or are empty.
func cleanName(name string) (string, error) {
	if name == "" || strings.ContainsRune(name, 0) {
		return "", fmt.Errorf("cpio entry %q: want a non-empty path without NUL", name)
	}
	c := strings.TrimPrefix(path.Clean("/"+name), "/")
	if c == "" {
		return "", fmt.Errorf("cpio entry %q: the archive root itself cannot be an entry", name)
	}
	return c, nil
}

// Dir adds a directory (and its missing parents). Like every mode of
// this writer, perm may carry setuid/setgid/sticky either way unixPerm
// accepts.
func (c *CPIOWriter) Dir(name string, perm fs.FileMode) error {
	n, err := cleanName(name)
	if err != nil {
		return err
	}
	if err := c.parents(n); err != nil {
		return err
	}
	if c.dirs[n] {
		return nil
	}
	c.dirs[n] = true
	return c.entry(n, cpioModeDir|unixPerm(perm), 2, 0, 0, nil, 0)
}

// File adds a regular file with the given content.
func (c *CPIOWriter) File(name string, perm fs.FileMode, data []byte) error {
	return c.FileFrom(name, perm, bytes.NewReader(data), int64(len(data)))
}

// FileFrom adds a regular file of exactly size bytes read from r.
func (c *CPIOWriter) FileFrom(name string, perm fs.FileMode, r io.Reader, size int64) error {
	if size < 0 || size > 0xffffffff {
		return fmt.Errorf("cpio entry %q: size %d does not fit the newc format (max 4 GiB)", name, size)
	}
	n, err := cleanName(name)
	if err != nil {
		return err
	}
	if err := c.parents(n); err != nil {
		return err
	}
	return c.entry(n, cpioModeFile|unixPerm(perm), 1, 0, 0, r, size)
}

// Symlink adds a symbolic link name → target (target is stored as given).
func (c *CPIOWriter) Symlink(name, target string) error {
	n, err := cleanName(name)
	if err != nil {
		return err
	}
	if target == "" {
		return fmt.Errorf("cpio symlink %q: empty target", name)
	}
	if err := c.parents(n); err != nil {
		return err
	}
	return c.entry(n, cpioModeSymlink|0o777, 1, 0, 0, strings.NewReader(target), int64(len(target)))
}

// CharDev adds a character device node (for example /dev/console, 5:1,
// which the kernel opens for init before devtmpfs is mounted).
func (c *CPIOWriter) CharDev(name string, perm fs.FileMode, major, minor uint32) error {
	n, err := cleanName(name)
	if err != nil {
		return err
	}
	if err := c.parents(n); err != nil {
		return err
	}
	return c.entry(n, cpioModeCharDev|unixPerm(perm), 1, major, minor, nil, 0)
}

// Close writes the TRAILER!!! entry. The writer is unusable afterwards.
func (c *CPIOWriter) Close() error {
	if c.err != nil {
		return c.err
	}
	err := c.header("TRAILER!!!", 0, 0, 1, 0, 0, 0)
	if err == nil {
		c.err = errors.New("cpio archive already closed")
	}
	return err
}

func (c *CPIOWriter) parents(name string) error {
	var missing []string
	for d := path.Dir(name); d != "." && !c.dirs[d]; d = path.Dir(d) {
		missing = append(missing, d)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		d := missing[i]
		if c.seen[d] {
			return fmt.Errorf("cpio entry %q: parent %q is already in the archive and is not a directory", name, d)
		}
		c.dirs[d] = true
		if err := c.entry(d, cpioModeDir|0o755, 2, 0, 0, nil, 0); err != nil {
			return err
		}
	}
	return nil
}

func (c *CPIOWriter) entry(name string, mode, nlink, rmajor, rminor uint32, r io.Reader, size int64) error {
	if c.err != nil {
		return c.err
	}
	if c.seen[name] {
		return fmt.Errorf("cpio entry %q: already in the archive", name)
	}
	c.seen[name] = true
	if err := c.header(name, c.ino, mode, nlink, rmajor, rminor, size); err != nil {
		return err
	}
	c.ino++
	if size == 0 {
		return nil
	}
	n, err := io.CopyN(c.w, r, size)
	if err != nil {
		if n < size && (err == io.EOF || err == nil) {
			err = io.ErrUnexpectedEOF
		}
		c.err = fmt.Errorf("cpio entry %q: copy %d bytes (got %d): %w", name, size, n, err)
		return c.err
	}
	return c.pad(size)
}

// header writes a 110-byte newc header and the NUL-terminated name, each
// padded to a multiple of 4 bytes from the start of the archive (header
// and name are always 4-aligned together, as are data blocks).
func (c *CPIOWriter) header(name string, ino, mode, nlink, rmajor, rminor uint32, size int64) error {
	if c.err != nil {
		return c.err
	}
	namesize := len(name) + 1
	h := fmt.Sprintf("070701%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x",
		ino, mode, 0, 0, nlink, 0, uint32(size), 0, 0, rmajor, rminor, namesize, 0)
	buf := make([]byte, 0, len(h)+namesize+3)
	buf = append(buf, h...)
	buf = append(buf, name...)
	buf = append(buf, 0)
	for len(buf)%4 != 0 {
		buf = append(buf, 0)
	}
	if _, err := c.w.Write(buf); err != nil {
		c.err = fmt.Errorf("cpio entry %q: write header: %w", name, err)
		return c.err
	}
	return nil
}

func (c *CPIOWriter) pad(size int64) error {
	if p := (4 - size%4) % 4; p > 0 {
		if _, err := c.w.Write(make([]byte, p)); err != nil {
			c.err = fmt.Errorf("cpio: write padding: %w", err)
			return c.err
		}
	}
	return nil
}
