package topology

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
)

// Root is the filesystem of the host being read or tuned. Names are
// absolute host paths ("/sys/class/net/eth0"); an implementation maps them
// below its root. Tests and --root use DirRoot on a fixture tree.
type Root interface {
	// ReadFile reads a whole file (following symlinks).
	ReadFile(name string) ([]byte, error)
	// ReadDir lists a directory (following symlinks).
	ReadDir(name string) ([]fs.DirEntry, error)
	// Lstat describes a file without following a final symlink.
	Lstat(name string) (fs.FileInfo, error)
	// Stat describes a file, following symlinks.
	Stat(name string) (fs.FileInfo, error)
	// Readlink returns a symlink's target as stored.
	Readlink(name string) (string, error)
	// WriteFile writes data to an existing file with one write(2):
	// no create (O_TRUNC, as a shell redirect, so fixture files read back
	// exactly what was written).
	WriteFile(name string, data []byte) error
}

// DirRoot is a Root below a directory of the local filesystem; "/" is the
// live host. It never touches anything outside the directory.
type DirRoot struct {
	dir string
	r   *os.Root
	tmp string // a directory Close removes: an unpacked snapshot
}

// Sentinel errors of OpenHost, for a caller that reports a bad path as
// the user's mistake.
var (
	// ErrNotDir: the path is neither a directory nor named as a snapshot
	// archive (.tar.gz, .tgz).
	ErrNotDir = errors.New("not a directory")
	// ErrNoSnapshot: the snapshot archive named cannot be opened; the
	// error's text is the open's.
	ErrNoSnapshot = errors.New("snapshot cannot be opened")
)

// OpenHost opens path as a host root: a directory (/, a fixture tree, an
// unpacked snapshot) or a snapshot archive from WriteTarGz, named .tar.gz
// or .tgz, which OpenSnapshot unpacks.
func OpenHost(path string) (*DirRoot, error) {
	if strings.HasSuffix(path, ".tar.gz") || strings.HasSuffix(path, ".tgz") {
		return OpenSnapshot(path)
	}
	if info, err := os.Stat(path); err != nil || !info.IsDir() {
		return nil, fmt.Errorf("host root %s: %w", path, ErrNotDir)
	}
	return OpenRoot(path)
}

// sentinelError is err that matches sentinel too (errors.Is holds for
// both); its text is err's.
type sentinelError struct{ sentinel, err error }

func (e *sentinelError) Error() string   { return e.err.Error() }
func (e *sentinelError) Unwrap() []error { return []error{e.sentinel, e.err} }

// OpenRoot opens dir as a host root.
func OpenRoot(dir string) (*DirRoot, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open host root %s: %w", dir, err)
	}
	return &DirRoot{dir: dir, r: r}, nil
}

// Dir is the directory the root was opened on.
func (d *DirRoot) Dir() string { return d.dir }

// Close releases the root, and removes the directory of a snapshot
// OpenSnapshot unpacked.
func (d *DirRoot) Close() error {
	err := d.r.Close()
	if d.tmp != "" {
		err = errors.Join(err, os.RemoveAll(d.tmp))
	}
	return err
}

func rel(name string) string {
	name = strings.TrimPrefix(path.Clean("/"+name), "/")
	if name == "" {
		return "."
	}
	return name
}

// ReadFile implements Root.
func (d *DirRoot) ReadFile(name string) ([]byte, error) { return d.r.ReadFile(rel(name)) }

// ReadDir implements Root.
func (d *DirRoot) ReadDir(name string) ([]fs.DirEntry, error) {
	f, err := d.r.Open(rel(name))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// Lstat implements Root.
func (d *DirRoot) Lstat(name string) (fs.FileInfo, error) { return d.r.Lstat(rel(name)) }

// Stat implements Root.
func (d *DirRoot) Stat(name string) (fs.FileInfo, error) { return d.r.Stat(rel(name)) }

// Readlink implements Root.
func (d *DirRoot) Readlink(name string) (string, error) { return d.r.Readlink(rel(name)) }

// WriteFile implements Root.
func (d *DirRoot) WriteFile(name string, data []byte) error {
	f, err := d.r.OpenFile(rel(name), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr != nil {
		return werr
	}
	return cerr
}

// realpath resolves every symlink in name inside r, as realpath(3) does on
// the host: sysfs links are relative, so the result stays in the root.
func realpath(r Root, name string) (string, error) {
	parts := strings.Split(strings.TrimPrefix(path.Clean("/"+name), "/"), "/")
	resolved := "/"
	for hops := 0; len(parts) > 0; {
		p := parts[0]
		parts = parts[1:]
		if p == "" || p == "." {
			continue
		}
		if p == ".." {
			resolved = path.Dir(resolved)
			continue
		}
		next := path.Join(resolved, p)
		info, err := r.Lstat(next)
		if err != nil {
			return "", err
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		if hops++; hops > 40 {
			return "", fmt.Errorf("resolve %s: too many levels of symbolic links", name)
		}
		target, err := r.Readlink(next)
		if err != nil {
			return "", err
		}
		if path.IsAbs(target) {
			resolved = "/"
		}
		parts = append(strings.Split(strings.Trim(target, "/"), "/"), parts...)
	}
	return resolved, nil
}

// readString reads a sysfs/procfs attribute, trimmed.
func readString(r Root, name string) (string, error) {
	b, err := r.ReadFile(name)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// readInt reads an integer attribute.
func readInt(r Root, name string) (int, error) {
	s, err := readString(r, name)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("read %s: %q is not an integer", name, s)
	}
	return n, nil
}

func exists(r Root, name string) bool {
	_, err := r.Lstat(name)
	return err == nil
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
