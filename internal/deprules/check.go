package deprules

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
)

// Violation is one import that breaks a rule: From reaches To, directly
// or through Via (the packages between them, in order).
type Violation struct {
	From, To string
	Via      []string
	Rule     string
	Test     bool // the import is in From's tests
}

// String names the edge, the way it is reached and the rule.
func (v Violation) String() string {
	s := v.From
	if v.Test {
		s += " (tests)"
	}
	s += " imports " + v.To
	if len(v.Via) > 0 {
		s += " (via " + strings.Join(v.Via, " → ") + ")"
	}
	return s + ": " + v.Rule
}

// pkg is what Check needs of `go list -json` output.
type pkg struct {
	ImportPath   string
	Standard     bool
	ForTest      string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Error        *struct{ Err string }
}

// Build is one way the tree is built: for an operating system (GOOS; ""
// this one) with build tags. Files of other systems (`_other.go`, `!linux`)
// and tagged tests only show in the builds that take them.
type Build struct {
	GOOS string
	Tags []string
}

// String names the build in messages.
func (b Build) String() string {
	s := b.GOOS
	if s == "" {
		s = "this system"
	}
	if len(b.Tags) > 0 {
		s += ", tags " + strings.Join(b.Tags, ",")
	}
	return s
}

// Check runs `go list -deps -test` over every package of the module in
// dir (as build b sees it) and returns the imports that break the
// package table rows: the Cross rules, each row's may-import and the
// floors. Violations are module-relative, at most one per (from, to)
// edge: the first rule it breaks.
func Check(ctx context.Context, dir string, b Build, rows []Row) ([]Violation, error) {
	mod, pkgs, err := load(ctx, dir, b)
	if err != nil {
		return nil, err
	}
	out := check(mod, pkgs, RulesOf(rows))
	reported := map[[2]string]bool{}
	for _, v := range out {
		reported[[2]string{v.From, v.To}] = true
	}
	for _, v := range floors(mod, pkgs, rows) {
		if !reported[[2]string{v.From, v.To}] {
			out = append(out, v)
		}
	}
	return out, nil
}

// Packages are the import paths of the module's own packages in dir, as
// build b sees them.
func Packages(ctx context.Context, dir string, b Build) (mod string, paths []string, err error) {
	mod, pkgs, err := load(ctx, dir, b)
	if err != nil {
		return "", nil, err
	}
	return mod, sortedModulePackages(mod, pkgs), nil
}

// load is the module path of dir and every package `go list -deps -test`
// finds there, by import path.
func load(ctx context.Context, dir string, b Build) (string, map[string]*pkg, error) {
	module, err := goList(ctx, dir, b, "-m")
	if err != nil {
		return "", nil, err
	}
	mod := strings.TrimSpace(string(module))
	args := []string{"-deps", "-test", "-json"}
	if len(b.Tags) > 0 {
		args = append(args, "-tags", strings.Join(b.Tags, ","))
	}
	out, err := goList(ctx, dir, b, append(args, "./...")...)
	if err != nil {
		return "", nil, err
	}
	pkgs, err := decode(out)
	if err != nil {
		return "", nil, fmt.Errorf("check imports of %s: %w", dir, err)
	}
	return mod, pkgs, nil
}

// goList runs `go list args...` in dir.
func goList(ctx context.Context, dir string, b Build, args ...string) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "go", append([]string{"list"}, args...)...)
	cmd.Dir = dir
	if b.GOOS != "" {
		cmd.Env = append(os.Environ(), "GOOS="+b.GOOS)
	}
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go list %s in %s: %w: %s", strings.Join(args, " "), dir, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// decode reads the stream of JSON objects of `go list -json`, keeping
// the packages themselves (not their test variants).
func decode(out []byte) (map[string]*pkg, error) {
	pkgs := map[string]*pkg{}
	d := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := d.Decode(&p); errors.Is(err, io.EOF) {
			return pkgs, nil
		} else if err != nil {
			return nil, fmt.Errorf("decode go list output: %w", err)
		}
		if p.Error != nil {
			return nil, fmt.Errorf("package %s: %s", p.ImportPath, p.Error.Err)
		}
		if p.ForTest != "" || strings.HasSuffix(p.ImportPath, ".test") {
			continue
		}
		pkgs[p.ImportPath] = &p
	}
}

func check(mod string, pkgs map[string]*pkg, rules []Rule) []Violation {
	var out []Violation
	for _, path := range sortedModulePackages(mod, pkgs) {
		p := pkgs[path]
		seen := map[string]bool{}
		add := func(v Violation) {
			if !seen[v.To] {
				seen[v.To] = true
				out = append(out, v)
			}
		}
		for _, r := range rules {
			if !r.appliesTo(mod, path, pkgs) {
				continue
			}
			for _, test := range []bool{false, true} {
				direct := p.Imports
				if test {
					direct = append(slices.Clone(p.TestImports), p.XTestImports...)
				}
				allow := r.Allow
				if test {
					allow = append(slices.Clone(r.Allow), r.AllowTest...)
				}
				for _, imp := range direct {
					if imp == path {
						continue // an external test package importing its own package
					}
					if len(r.Allow) > 0 && !matchAny(mod, allow, imp, pkgs) {
						add(violation(mod, path, imp, nil, r, test))
					}
				}
				if len(r.Deny) == 0 {
					continue
				}
				for to, via := range reach(direct, path, pkgs) {
					if matchAny(mod, r.Deny, to, pkgs) && !matchAny(mod, r.DenyExcept, to, pkgs) {
						add(violation(mod, path, to, via, r, test))
					}
				}
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Violation) int { return strings.Compare(a.From+" "+a.To, b.From+" "+b.To) })
	return out
}

// reach is every package reachable from the direct imports, each with
// the packages on one shortest path to it (excluding both ends).
func reach(direct []string, from string, pkgs map[string]*pkg) map[string][]string {
	via := map[string][]string{}
	queue := []string{}
	for _, imp := range direct {
		if _, ok := via[imp]; !ok && imp != from {
			via[imp] = nil
			queue = append(queue, imp)
		}
	}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		p := pkgs[cur]
		if p == nil {
			continue
		}
		for _, imp := range p.Imports {
			if _, ok := via[imp]; ok || imp == from {
				continue
			}
			via[imp] = append(slices.Clone(via[cur]), cur)
			queue = append(queue, imp)
		}
	}
	return via
}

func violation(mod, from, to string, via []string, r Rule, test bool) Violation {
	v := Violation{From: short(mod, from), To: short(mod, to), Rule: r.Name, Test: test}
	for _, p := range via {
		v.Via = append(v.Via, short(mod, p))
	}
	return v
}

func (r Rule) appliesTo(mod, path string, pkgs map[string]*pkg) bool {
	return matchAny(mod, r.From, path, pkgs) && !matchAny(mod, r.Except, path, pkgs)
}

func matchAny(mod string, patterns []string, path string, pkgs map[string]*pkg) bool {
	for _, pat := range patterns {
		if match(mod, pat, path, pkgs) {
			return true
		}
	}
	return false
}

// match reports whether path matches pattern (see Rule).
func match(mod, pattern, path string, pkgs map[string]*pkg) bool {
	if pattern == Std {
		p := pkgs[path]
		return p != nil && p.Standard
	}
	first, _, _ := strings.Cut(pattern, "/")
	if pattern == "..." {
		pattern = mod + "/..."
	} else if !strings.Contains(first, ".") {
		pattern = mod + "/" + pattern
	}
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return path == base || strings.HasPrefix(path, base+"/")
	}
	return path == pattern
}

func inModule(mod, path string) bool { return path == mod || strings.HasPrefix(path, mod+"/") }

// short is path relative to the module, or path itself outside it.
func short(mod, path string) string {
	if path == mod {
		return "."
	}
	if s, ok := strings.CutPrefix(path, mod+"/"); ok {
		return s
	}
	return path
}
