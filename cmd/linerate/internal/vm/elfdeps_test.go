package vm

import (
	"errors"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// ELFFiles finds what this machine's loader loads: for real dynamically
// linked executables of the host, the same libraries, by name and by
// file, as ldd lists (ldd runs the loader itself, through its cache).
func TestELFFilesAsLdd(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("reads x86-64 Linux executables of this machine")
	}
	if _, err := exec.LookPath("ldd"); err != nil {
		t.Skip("no ldd to compare with")
	}
	exes := []string{"/bin/ls", "/bin/tar"}
	if p, err := exec.LookPath("trafgen"); err == nil {
		exes = append(exes, p)
	}
	for _, exe := range exes {
		t.Run(path.Base(exe), func(t *testing.T) {
			if _, err := os.Stat(exe); err != nil {
				t.Skipf("%s: %v", exe, err)
			}
			got, err := ELFFiles("/", exe)
			if err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command("ldd", exe).Output()
			if err != nil {
				t.Fatalf("ldd %s: %v", exe, err)
			}
			want := map[string]string{exe: exe} // base name → the file ldd names
			for _, l := range strings.Split(string(out), "\n") {
				f := strings.Fields(l)
				switch {
				case len(f) >= 3 && f[1] == "=>" && strings.HasPrefix(f[2], "/"):
					want[f[0]] = f[2]
				case len(f) == 2 && strings.HasPrefix(f[0], "/"): // the interpreter
					want[f[0]] = f[0]
				}
			}
			if len(want) < 3 {
				t.Fatalf("ldd %s lists too little to compare with:\n%s", exe, out)
			}
			byName := map[string]string{}
			for g, h := range got {
				byName[path.Base(g)] = h
				if g == exe || strings.HasPrefix(path.Base(g), "ld-linux") {
					byName[g] = h
				}
			}
			for name, file := range want {
				h, ok := byName[name]
				if !ok {
					h, ok = byName[path.Base(name)]
				}
				if !ok {
					t.Errorf("%s: ldd lists %s (%s), ELFFiles has no such file: %v", exe, name, file, keys(got))
					continue
				}
				if !sameFile(t, h, file) {
					t.Errorf("%s: %s is %s here, %s for ldd", exe, name, h, file)
				}
			}
			if len(got) != len(want) {
				t.Errorf("%s: ELFFiles has %d files %v, ldd %d:\n%s", exe, len(got), keys(got), len(want), out)
			}
		})
	}
}

func sameFile(t *testing.T, a, b string) bool {
	t.Helper()
	fa, err := os.Stat(a)
	if err != nil {
		t.Fatal(err)
	}
	fb, err := os.Stat(b)
	if err != nil {
		t.Fatal(err)
	}
	return os.SameFile(fa, fb)
}

func keys(m map[string]string) []string {
	var k []string
	for g := range m {
		k = append(k, g)
	}
	sort.Strings(k)
	return k
}

// Bad input is refused naming the file and what is wrong, in a host root
// made here: missing, relative, not executable, not an ELF, and an ELF
// whose libraries are not in the root.
func TestELFFilesRefuses(t *testing.T) {
	root := t.TempDir()
	write := func(p string, data []byte, mode os.FileMode) {
		t.Helper()
		h := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(h), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(h, data, mode); err != nil {
			t.Fatal(err)
		}
	}
	write("/bin/script", []byte("#!/bin/sh\necho hi\n"), 0o755)
	write("/bin/data", []byte("not executable"), 0o644)
	for _, tc := range []struct {
		file string
		want string
		not  bool // errors.Is ErrNotELF
	}{
		{"/bin/missing", "guest file /bin/missing: stat", false},
		{"bin/script", `guest file "bin/script": want an absolute path`, false},
		{"/bin/data", "guest file /bin/data: not an x86-64 ELF executable: not an executable regular file", true},
		{"/bin/script", "guest file /bin/script: /bin/script: not an x86-64 ELF executable", true},
	} {
		_, err := ELFFiles(root, tc.file)
		if err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, ErrNotELF) != tc.not {
			t.Errorf("ELFFiles(%s): %v, want an error with %q (ErrNotELF: %v)", tc.file, err, tc.want, tc.not)
		}
	}
	// A real dynamic executable, alone in the root: its interpreter is
	// not there; with it, its first library is in none of the loader's
	// directories.
	if runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
		ls, err := os.ReadFile("/bin/ls")
		if err != nil {
			t.Skipf("no /bin/ls to copy: %v", err)
		}
		write("/bin/ls", ls, 0o755)
		_, err = ELFFiles(root, "/bin/ls")
		if err == nil || !strings.Contains(err.Error(), "guest file /bin/ls: /bin/ls: its interpreter: stat ") {
			t.Errorf("ELFFiles(/bin/ls) alone in a root: %v, want its missing interpreter named", err)
		}
		ld, err := os.ReadFile("/lib64/ld-linux-x86-64.so.2")
		if err != nil {
			t.Skipf("no loader to copy: %v", err)
		}
		write("/lib64/ld-linux-x86-64.so.2", ld, 0o755)
		_, err = ELFFiles(root, "/bin/ls")
		if err == nil || !strings.Contains(err.Error(), "guest file /bin/ls: /bin/ls needs lib") || !strings.Contains(err.Error(), "found in none of /lib/x86_64-linux-gnu, ") {
			t.Errorf("ELFFiles(/bin/ls) alone in a root: %v, want its missing library named with the directories looked in", err)
		}
	}
}
