// Package safefile writes files whole or not at all, and only over
// regular files: the one atomic write of the tree (result documents,
// reports, the IRQ journal, certificates), and the output-file rule of
// the command line ("-" is standard output).
//
// A file is replaced through a temporary file in the same directory,
// written, given its mode, fsynced, renamed over the name, and the
// directory fsynced: a reader sees the old file or the new one, never
// part of one, and after a crash the rename has happened or it has not.
//
// A rename replaces whatever the name points at, so WriteFile looks
// first: a directory, a device (/dev/null, /dev/stdout), a fifo or a
// socket is refused with ErrNotRegular and left as it was. A symbolic
// link is followed: the file it names is replaced (the link stays), and
// a link to anything but a regular file is refused like that thing.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Stdout is the name that means standard output in an output-file flag.
const Stdout = "-"

// ErrNotRegular: the target exists and is not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// Check tells whether Output may write path: "-", a name that does not
// exist yet in a directory that does, or a regular file (through any
// symbolic links). Callers run it before work that ends in a write (a
// campaign of hours must not end unable to write its report).
func Check(path string) error {
	if path == Stdout {
		return nil
	}
	target, err := resolve(path)
	if err != nil {
		return err
	}
	dir := filepath.Dir(target)
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return fmt.Errorf("%s: directory %s does not exist", path, dir)
	}
	return nil
}

// resolve follows path's symbolic links and refuses a target that
// exists and is not a regular file.
func resolve(path string) (string, error) {
	info, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return path, nil
	}
	if err != nil {
		return "", err
	}
	target := path
	if info.Mode()&fs.ModeSymlink != 0 {
		if target, err = filepath.EvalSymlinks(path); err != nil {
			return "", fmt.Errorf("%s: symbolic link to nothing readable: %w", path, err)
		}
		if info, err = os.Stat(target); err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
	}
	if !info.Mode().IsRegular() {
		what := kind(info.Mode())
		if target != path {
			what += " " + target + " (through a symbolic link)"
		}
		return "", fmt.Errorf("%s: %w: it is a %s, and only a regular file is replaced", path, ErrNotRegular, what)
	}
	return target, nil
}

// kind names a file type for messages.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	}
	return "special file (" + m.Type().String() + ")"
}

// WriteFile replaces path with data, mode perm exactly (whatever the
// umask), atomically (see the package documentation). It refuses a path
// that is not a regular file, and leaves it untouched.
func WriteFile(path string, data []byte, perm fs.FileMode) (err error) {
	target, err := resolve(path)
	if err != nil {
		return err
	}
	dir := filepath.Dir(target)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(target)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = tmp.Chmod(perm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("write %s: sync: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), target); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	// The rename is durable once the directory is.
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// Output writes data where an output-file flag says: standard output
// (stdout) for "-", else the file path, with WriteFile (mode 0644).
func Output(path string, stdout io.Writer, data []byte) error {
	if path == Stdout {
		if _, err := stdout.Write(data); err != nil {
			return fmt.Errorf("write standard output: %w", err)
		}
		return nil
	}
	return WriteFile(path, data, 0o644)
}
