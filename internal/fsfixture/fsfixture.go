// Package fsfixture stores small filesystem trees — files, empty
// directories, symbolic links and file modes — in one text archive, so
// that sysfs and procfs fixtures (whose relative symlinks matter) can be
// reviewed as text and unpacked by tests.
//
// The format is txtar-like. Text before the first header is a comment.
// Each entry starts with a header line:
//
//	-- path/to/file --            a regular file; the following lines are its content
//	-- path/to/file mode=0444 --  a regular file with that permission mode
//	-- path/to/dir/ --            an (empty) directory
//	-- path/to/link -> target --  a symbolic link (target kept as written)
//
// Content runs to the next header; a file whose content does not end in a
// newline gets one, as sysfs and procfs files always end in one. Paths are
// relative and may not contain "..".
package fsfixture

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Kind is the type of an archive entry.
type Kind int

// Entry kinds.
const (
	File Kind = iota
	Dir
	Symlink
)

// Entry is one file, directory or link of an archive.
type Entry struct {
	Path   string
	Kind   Kind
	Mode   fs.FileMode // permission bits of a File; 0 means 0644
	Target string      // link target of a Symlink
	Data   []byte      // content of a File
}

// Archive is a parsed fixture.
type Archive struct {
	Comment string
	Entries []Entry
}

// Parse reads an archive.
func Parse(data []byte) (*Archive, error) {
	a := &Archive{}
	var cur *Entry
	var body bytes.Buffer
	flush := func() {
		if cur == nil {
			a.Comment = body.String()
		} else {
			if cur.Kind == File {
				cur.Data = append([]byte(nil), body.Bytes()...)
			}
			a.Entries = append(a.Entries, *cur)
		}
		body.Reset()
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if strings.HasPrefix(text, "-- ") && strings.HasSuffix(text, " --") && len(text) >= 6 {
			e, err := parseHeader(strings.TrimSuffix(strings.TrimPrefix(text, "-- "), " --"))
			if err != nil {
				return nil, fmt.Errorf("fixture line %d %q: %w", line, text, err)
			}
			flush()
			cur = &e
			continue
		}
		if cur != nil && cur.Kind != File {
			if strings.TrimSpace(text) != "" {
				return nil, fmt.Errorf("fixture line %d: content after a %s entry %q (only files have content)", line, kindName(cur.Kind), cur.Path)
			}
			continue
		}
		body.WriteString(text)
		body.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read fixture: %w", err)
	}
	flush()
	return a, nil
}

func kindName(k Kind) string {
	switch k {
	case Dir:
		return "directory"
	case Symlink:
		return "symlink"
	}
	return "file"
}

func parseHeader(h string) (Entry, error) {
	if from, to, ok := strings.Cut(h, " -> "); ok {
		p, err := cleanPath(from)
		if err != nil {
			return Entry{}, err
		}
		if to == "" {
			return Entry{}, fmt.Errorf("symlink %q has an empty target", from)
		}
		return Entry{Path: p, Kind: Symlink, Target: to}, nil
	}
	mode := fs.FileMode(0)
	if i := strings.LastIndex(h, " mode="); i >= 0 {
		m, err := strconv.ParseUint(h[i+len(" mode="):], 8, 32)
		if err != nil || m > 0o777 {
			return Entry{}, fmt.Errorf("bad mode %q (want octal like 0444)", h[i+1:])
		}
		mode = fs.FileMode(m)
		h = h[:i]
	}
	if strings.HasSuffix(h, "/") {
		p, err := cleanPath(strings.TrimSuffix(h, "/"))
		return Entry{Path: p, Kind: Dir}, err
	}
	p, err := cleanPath(h)
	return Entry{Path: p, Kind: File, Mode: mode}, err
}

func cleanPath(p string) (string, error) {
	if p == "" || strings.HasPrefix(p, "/") {
		return "", fmt.Errorf("path %q must be relative and non-empty", p)
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." || part == "." || part == "" {
			return "", fmt.Errorf("path %q may not contain empty, \".\" or \"..\" parts", p)
		}
	}
	return p, nil
}

// Unpack writes the archive's entries below dir, creating parents.
func (a *Archive) Unpack(dir string) error {
	for _, e := range a.Entries {
		dst := filepath.Join(dir, filepath.FromSlash(e.Path))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("unpack %s: %w", e.Path, err)
		}
		var err error
		switch e.Kind {
		case Dir:
			err = os.MkdirAll(dst, 0o755)
		case Symlink:
			err = os.Symlink(e.Target, dst)
		default:
			mode := e.Mode
			if mode == 0 {
				mode = 0o644
			}
			if err = os.WriteFile(dst, e.Data, mode); err == nil {
				err = os.Chmod(dst, mode) // umask-proof
			}
		}
		if err != nil {
			return fmt.Errorf("unpack %s: %w", e.Path, err)
		}
	}
	return nil
}

// UnpackFile parses the archive at path and unpacks it below dir.
func UnpackFile(path, dir string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read fixture: %w", err)
	}
	a, err := Parse(data)
	if err != nil {
		return fmt.Errorf("parse fixture %s: %w", path, err)
	}
	return a.Unpack(dir)
}

// Pack builds an archive of the tree below dir: files (with their mode
// when it is not 0644), symlinks, and directories that are empty.
func Pack(dir, comment string) ([]byte, error) {
	var entries []Entry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			t, err := os.Readlink(p)
			if err != nil {
				return err
			}
			entries = append(entries, Entry{Path: rel, Kind: Symlink, Target: t})
		case d.IsDir():
			kids, err := os.ReadDir(p)
			if err != nil {
				return err
			}
			if len(kids) == 0 {
				entries = append(entries, Entry{Path: rel, Kind: Dir})
			}
		default:
			info, err := d.Info()
			if err != nil {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			entries = append(entries, Entry{Path: rel, Kind: File, Mode: info.Mode().Perm(), Data: data})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pack %s: %w", dir, err)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Path < entries[j].Path })
	return Format(comment, entries), nil
}

// Format renders entries as an archive.
func Format(comment string, entries []Entry) []byte {
	var b bytes.Buffer
	b.WriteString(comment)
	if comment != "" && !strings.HasSuffix(comment, "\n") {
		b.WriteByte('\n')
	}
	for _, e := range entries {
		switch e.Kind {
		case Dir:
			fmt.Fprintf(&b, "-- %s/ --\n", e.Path)
		case Symlink:
			fmt.Fprintf(&b, "-- %s -> %s --\n", e.Path, e.Target)
		default:
			if e.Mode != 0 && e.Mode != 0o644 {
				fmt.Fprintf(&b, "-- %s mode=%04o --\n", e.Path, e.Mode)
			} else {
				fmt.Fprintf(&b, "-- %s --\n", e.Path)
			}
			b.Write(e.Data)
			if len(e.Data) > 0 && e.Data[len(e.Data)-1] != '\n' {
				b.WriteByte('\n')
			}
		}
	}
	return b.Bytes()
}
