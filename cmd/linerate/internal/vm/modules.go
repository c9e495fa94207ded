package vm

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/linerate/linerate/internal/safefile"
)

// ErrUnknownModule is returned when a module is neither in modules.dep nor
// built in.
var ErrUnknownModule = errors.New("unknown kernel module")

// Module is one loadable kernel module.
type Module struct {
	Name string // canonical name: "virtio_net" (dashes become underscores)
	Path string // host path of the .ko file; may be compressed (.ko.xz, .ko.zst, .ko.gz)
}

// ModuleDB is the dependency table of one kernel's modules directory
// (lib/modules/<release>): modules.dep, plus modules.builtin to know which
// names need no loading.
type ModuleDB struct {
	dir     string
	paths   map[string]string   // name → path relative to dir
	deps    map[string][]string // name → dependency names, as modules.dep lists them
	builtin map[string]bool
}

// moduleName is the canonical module name of a .ko path or a name.
func moduleName(p string) string {
	b := path.Base(filepath.ToSlash(p))
	for _, ext := range []string{".xz", ".zst", ".gz"} {
		b = strings.TrimSuffix(b, ext)
	}
	b = strings.TrimSuffix(b, ".ko")
	return strings.ReplaceAll(b, "-", "_")
}

// LoadModuleDB reads dir/modules.dep and, when present, dir/modules.builtin.
func LoadModuleDB(dir string) (*ModuleDB, error) {
	f, err := os.Open(filepath.Join(dir, "modules.dep"))
	if err != nil {
		return nil, fmt.Errorf("load module table of %s: %w", dir, err)
	}
	defer f.Close()
	db, err := ParseModulesDep(f)
	if err != nil {
		return nil, fmt.Errorf("load module table of %s: %w", dir, err)
	}
	db.dir = dir
	if b, err := os.ReadFile(filepath.Join(dir, "modules.builtin")); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				db.builtin[moduleName(l)] = true
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("load module table of %s: %w", dir, err)
	}
	return db, nil
}

// ParseModulesDep parses the modules.dep format written by depmod(8):
// one line per module, "path: dep-path dep-path ...", paths relative to
// the modules directory. Lines may be blank; '#' starts a comment line.
func ParseModulesDep(r io.Reader) (*ModuleDB, error) {
	db := &ModuleDB{paths: map[string]string{}, deps: map[string][]string{}, builtin: map[string]bool{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for lineNo := 1; sc.Scan(); lineNo++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		p, rest, ok := strings.Cut(line, ":")
		p = strings.TrimSpace(p)
		if !ok || p == "" || strings.ContainsAny(p, " \t") {
			return nil, fmt.Errorf("modules.dep line %d: %q: want \"path.ko: dep.ko ...\"", lineNo, line)
		}
		name := moduleName(p)
		if name == "" {
			return nil, fmt.Errorf("modules.dep line %d: %q has no module name", lineNo, p)
		}
		if strings.Contains(name, ".") {
			// Kernel module names have no dots; "x.ko.ko" would name "x.ko",
			// which a lookup by name reads as "x".
			return nil, fmt.Errorf("modules.dep line %d: %q gives the module name %q, which has a '.': not a kernel module", lineNo, p, name)
		}
		if old, dup := db.paths[name]; dup {
			return nil, fmt.Errorf("modules.dep line %d: module %s listed twice (%s and %s)", lineNo, name, old, p)
		}
		db.paths[name] = p
		var deps []string
		for _, d := range strings.Fields(rest) {
			deps = append(deps, moduleName(d))
		}
		db.deps[name] = deps
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read modules.dep: %w", err)
	}
	return db, nil
}

// Builtin reports whether the kernel has the module built in.
func (db *ModuleDB) Builtin(name string) bool { return db.builtin[moduleName(name)] }

// Resolve returns the named modules with everything they depend on, in
// an order insmod can load them (every module after its dependencies),
// each once. Built-in modules are left out: there is nothing to load.
func (db *ModuleDB) Resolve(names ...string) ([]Module, error) {
	const (
		unseen = iota
		visiting
		done
	)
	state := map[string]int{}
	var out []Module
	var visit func(name string, chain []string) error
	visit = func(name string, chain []string) error {
		switch state[name] {
		case done:
			return nil
		case visiting:
			return fmt.Errorf("resolve module %s: dependency cycle %s", chain[0], strings.Join(append(chain, name), " -> "))
		}
		p, ok := db.paths[name]
		if !ok {
			if db.builtin[name] {
				state[name] = done
				return nil
			}
			what := "module " + name
			if len(chain) > 0 {
				what += " (needed by " + strings.Join(chain, " -> ") + ")"
			}
			return fmt.Errorf("resolve %s: %w: not in modules.dep of %s nor built in", what, ErrUnknownModule, db.dirName())
		}
		state[name] = visiting
		deps := db.deps[name]
		// depmod lists dependencies so that the last one loads first.
		for i := len(deps) - 1; i >= 0; i-- {
			if err := visit(deps[i], append(chain[:len(chain):len(chain)], name)); err != nil {
				return err
			}
		}
		state[name] = done
		out = append(out, Module{Name: name, Path: filepath.Join(db.dir, filepath.FromSlash(p))})
		return nil
	}
	for _, n := range names {
		if err := visit(moduleName(n), nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (db *ModuleDB) dirName() string {
	if db.dir == "" {
		return "the module table"
	}
	return db.dir
}

// ReadModule returns the uncompressed ELF object of a .ko, .ko.gz, .ko.xz
// (decompressed by xz from xz-utils) or .ko.zst (by zstd) file: busybox
// insmod loads only plain objects.
func ReadModule(p string) ([]byte, error) {
	var tool string
	switch {
	case strings.HasSuffix(p, ".ko"):
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("read module %s: %w", p, err)
		}
		return b, nil
	case strings.HasSuffix(p, ".ko.gz"):
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("read module %s: %w", p, err)
		}
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("decompress module %s: %w", p, err)
		}
		b, err := io.ReadAll(zr)
		if err != nil {
			return nil, fmt.Errorf("decompress module %s: %w", p, err)
		}
		return b, nil
	case strings.HasSuffix(p, ".ko.xz"):
		tool = "xz"
	case strings.HasSuffix(p, ".ko.zst"):
		tool = "zstd"
	default:
		return nil, fmt.Errorf("read module %s: not a .ko, .ko.gz, .ko.xz or .ko.zst file", p)
	}
	if _, err := exec.LookPath(tool); err != nil {
		pkg := map[string]string{"xz": "xz-utils", "zstd": "zstd"}[tool]
		return nil, fmt.Errorf("decompress module %s: %s not found (apt-get install %s): %w", p, tool, pkg, err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(tool, "-dc", p)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("decompress module %s with %s: %w: %s", p, tool, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// modinfoDepends reads the "depends=" entry of a module's .modinfo section.
func modinfoDepends(obj []byte) ([]string, error) {
	f, err := elf.NewFile(bytes.NewReader(obj))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sec := f.Section(".modinfo")
	if sec == nil {
		return nil, errors.New("no .modinfo section")
	}
	data, err := sec.Data()
	if err != nil {
		return nil, fmt.Errorf("read .modinfo: %w", err)
	}
	var deps []string
	for _, kv := range bytes.Split(data, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte("depends=")); ok {
			for _, d := range strings.Split(string(v), ",") {
				if d = strings.TrimSpace(d); d != "" {
					deps = append(deps, moduleName(d))
				}
			}
		}
	}
	return deps, nil
}

// GenerateModulesDep writes dir/modules.dep from the "depends=" field of
// every module's .modinfo section, as depmod(8) would (Debian's kernel
// packages do not ship modules.dep: their postinst runs depmod). Each
// line lists the module's transitive dependencies, the one to load first
// last. Dependencies that no module provides are returned as warnings.
func GenerateModulesDep(dir string) (warnings []string, err error) {
	paths := map[string]string{}
	var names []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !isModuleFile(p) {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		name := moduleName(p)
		if old, dup := paths[name]; dup {
			warnings = append(warnings, fmt.Sprintf("module %s found twice (%s, %s): keeping the first", name, old, rel))
			return nil
		}
		paths[name] = filepath.ToSlash(rel)
		names = append(names, name)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("generate modules.dep for %s: list modules: %w", dir, err)
	}
	direct := map[string][]string{}
	for _, n := range names {
		obj, err := ReadModule(filepath.Join(dir, filepath.FromSlash(paths[n])))
		if err != nil {
			return nil, fmt.Errorf("generate modules.dep for %s: %w", dir, err)
		}
		deps, err := modinfoDepends(obj)
		if err != nil {
			return nil, fmt.Errorf("generate modules.dep for %s: module %s: %w", dir, paths[n], err)
		}
		for _, d := range deps {
			if _, ok := paths[d]; !ok {
				warnings = append(warnings, fmt.Sprintf("module %s depends on %s, which no module provides", n, d))
				continue
			}
			direct[n] = append(direct[n], d)
		}
	}
	sort.Slice(names, func(i, j int) bool { return paths[names[i]] < paths[names[j]] })
	var buf bytes.Buffer
	for _, n := range names {
		// Load order of n's dependencies (post-order), written reversed.
		var order []string
		seen := map[string]bool{n: true}
		var walk func(m string)
		walk = func(m string) {
			for _, d := range direct[m] {
				if !seen[d] {
					seen[d] = true
					walk(d)
					order = append(order, d)
				}
			}
		}
		walk(n)
		buf.WriteString(paths[n] + ":")
		for i := len(order) - 1; i >= 0; i-- {
			buf.WriteString(" " + paths[order[i]])
		}
		buf.WriteByte('\n')
	}
	if err := safefile.WriteFile(filepath.Join(dir, "modules.dep"), buf.Bytes(), 0o644); err != nil {
		return nil, fmt.Errorf("generate modules.dep for %s: %w", dir, err)
	}
	return warnings, nil
}

func isModuleFile(p string) bool {
	for _, ext := range []string{".ko", ".ko.xz", ".ko.zst", ".ko.gz"} {
		if strings.HasSuffix(p, ext) {
			return true
		}
	}
	return false
}
