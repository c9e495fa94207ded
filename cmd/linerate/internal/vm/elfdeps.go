package vm

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// libDirs are where the guest's loader looks for a library that no
// RUNPATH names, in its order: Debian's x86-64 multiarch directories,
// then the classic ones. The guest has no ld.so.cache and no
// ld.so.conf, so a library the host finds only through its cache (in
// /usr/local/lib, say) would not load there: it is not looked for.
var libDirs = []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"}

// ErrNotELF is ELFFiles' refusal of a file that is not an x86-64 ELF
// executable.
var ErrNotELF = errors.New("not an x86-64 ELF executable")

// ELFFiles are the files a guest needs to run the executable file (an
// absolute path on the host whose root is root, "/" for this machine's):
// guest path → host path for file itself, its program interpreter
// (PT_INTERP) and every shared library it needs, directly or through
// another (DT_NEEDED, recursively), each at the path where the guest's
// loader looks for it (the first of the ELF's DT_RUNPATH or DT_RPATH
// directories, then libDirs, that holds it), as Initramfs.Files takes
// them. A static executable is only itself. It reads the ELF headers
// (debug/elf) and never runs the file, so ldd's trust in the file is not
// needed. Errors name the file: missing, not an x86-64 ELF executable,
// or a library found in none of the directories (listed).
func ELFFiles(root, file string) (map[string]string, error) {
	if !path.IsAbs(file) {
		return nil, fmt.Errorf("guest file %q: want an absolute path", file)
	}
	file = path.Clean(file)
	host := filepath.Join(root, file)
	fi, err := os.Stat(host)
	if err != nil {
		return nil, fmt.Errorf("guest file %s: %w", file, err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return nil, fmt.Errorf("guest file %s: %w: not an executable regular file (mode %s)", file, ErrNotELF, fi.Mode())
	}
	out := map[string]string{file: host}
	r := &elfResolver{root: root, out: out}
	if err := r.add(file, host, true); err != nil {
		return nil, fmt.Errorf("guest file %s: %w", file, err)
	}
	return out, nil
}

// elfResolver walks one executable's libraries into out.
type elfResolver struct {
	root string
	out  map[string]string // guest path → host path
}

// add reads the ELF at host (guest path guest) and adds what it needs;
// exe: it is the executable (its interpreter is read too).
func (r *elfResolver) add(guest, host string, exe bool) error {
	f, err := elf.Open(host)
	if err != nil {
		return fmt.Errorf("%s: %w (%v)", guest, ErrNotELF, err)
	}
	defer f.Close()
	if f.Machine != elf.EM_X86_64 || f.Class != elf.ELFCLASS64 {
		return fmt.Errorf("%s: %w: machine %v, class %v", guest, ErrNotELF, f.Machine, f.Class)
	}
	if exe && f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return fmt.Errorf("%s: %w: type %v", guest, ErrNotELF, f.Type)
	}
	if exe {
		for _, p := range f.Progs {
			if p.Type != elf.PT_INTERP {
				continue
			}
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err != nil {
				return fmt.Errorf("%s: read its interpreter: %w", guest, err)
			}
			interp := strings.TrimRight(string(b), "\x00")
			ih := filepath.Join(r.root, interp)
			if _, err := os.Stat(ih); err != nil {
				return fmt.Errorf("%s: its interpreter: %w", guest, err)
			}
			r.out[interp] = ih
		}
	}
	needed, err := f.ImportedLibraries()
	if err != nil {
		return fmt.Errorf("%s: read its DT_NEEDED: %w", guest, err)
	}
	dirs, err := r.searchDirs(f, guest)
	if err != nil {
		return err
	}
	for _, lib := range needed {
		if r.has(lib) {
			continue
		}
		found := false
		for _, d := range dirs {
			g := path.Join(d, lib)
			h := filepath.Join(r.root, g)
			if fi, err := os.Stat(h); err != nil || !fi.Mode().IsRegular() {
				continue
			}
			// A library of another machine (a 32-bit one in /lib) is
			// skipped, as the loader skips it.
			if !isX86_64(h) {
				continue
			}
			r.out[g] = h
			if err := r.add(g, h, false); err != nil {
				return err
			}
			found = true
			break
		}
		if !found {
			return fmt.Errorf("%s needs %s, found in none of %s (the guest's loader has no ld.so.cache)", guest, lib, strings.Join(dirs, ", "))
		}
	}
	return nil
}

// has reports whether a library of that name is in out already (the
// loader loads a soname once).
func (r *elfResolver) has(lib string) bool {
	for g := range r.out {
		if path.Base(g) == lib {
			return true
		}
	}
	return false
}

// searchDirs are the directories f's libraries are looked for in: its
// DT_RUNPATH (else DT_RPATH), $ORIGIN being its own directory, then
// libDirs.
func (r *elfResolver) searchDirs(f *elf.File, guest string) ([]string, error) {
	var dirs []string
	rp, err := f.DynString(elf.DT_RUNPATH)
	if err == nil && len(rp) == 0 {
		rp, err = f.DynString(elf.DT_RPATH)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: read its run path: %w", guest, err)
	}
	for _, s := range rp {
		for _, d := range strings.Split(s, ":") {
			d = strings.ReplaceAll(strings.ReplaceAll(d, "${ORIGIN}", "$ORIGIN"), "$ORIGIN", path.Dir(guest))
			if path.IsAbs(d) {
				dirs = append(dirs, path.Clean(d))
			}
		}
	}
	return append(dirs, libDirs...), nil
}

// isX86_64 reports whether host is a 64-bit x86 ELF file.
func isX86_64(host string) bool {
	f, err := elf.Open(host)
	if err != nil {
		return false
	}
	defer f.Close()
	return f.Machine == elf.EM_X86_64 && f.Class == elf.ELFCLASS64
}
