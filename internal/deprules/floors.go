package deprules

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
)

// floorOf is the floor of the row that names the package at path (ok
// false: no row names it).
func floorOf(mod, p string, rows []Row) (floor int, ok bool) {
	for _, r := range rows {
		for _, pat := range r.Packages {
			if match(mod, pat, p, nil) {
				return r.Floor, true
			}
		}
	}
	return 0, false
}

// floors are the imports, in code or tests, of a module package to a
// module package of a higher floor: no package imports one above it.
func floors(mod string, pkgs map[string]*pkg, rows []Row) []Violation {
	var out []Violation
	for _, from := range sortedModulePackages(mod, pkgs) {
		ff, ok := floorOf(mod, from, rows)
		if !ok {
			continue // Layout reports it
		}
		p := pkgs[from]
		seen := map[string]bool{}
		for _, test := range []bool{false, true} {
			direct := p.Imports
			if test {
				direct = append(slices.Clone(p.TestImports), p.XTestImports...)
			}
			for _, to := range direct {
				if seen[to] || to == from || !inModule(mod, to) {
					continue
				}
				if tf, ok := floorOf(mod, to, rows); ok && tf > ff {
					seen[to] = true
					out = append(out, Violation{From: short(mod, from), To: short(mod, to), Test: test,
						Rule: fmt.Sprintf("no package imports one above it: floor %d imports floor %d", ff, tf)})
				}
			}
		}
	}
	return out
}

// Layout says where the module's packages (import paths) and the table
// disagree: a package no row names or that two rows name, a folder that
// holds packages of two floors (the packages directly in it, and the
// folder's own package), and a pattern of the module that names no
// package (a row whose package moved away, an import it allows of a
// package that is gone), so the table cannot go stale unseen. The
// module's root is the design card's: its seven top-level packages
// (topology, pktgen, receiver, proto, agent, coordinator, cmd) are fixed
// there whatever their floors.
func Layout(mod string, packages []string, rows []Row) []string {
	var out []string
	own := slices.Sorted(slices.Values(slices.DeleteFunc(slices.Clone(packages), func(p string) bool { return !inModule(mod, p) })))
	byFolder := map[string]map[int][]string{}
	for _, p := range own {
		var lines []string
		for _, r := range rows {
			if matchAny(mod, r.Packages, p, nil) {
				lines = append(lines, fmt.Sprint(r.Line))
			}
		}
		switch {
		case len(lines) == 0:
			out = append(out, fmt.Sprintf("package %s is in no row of the package table: give it one (its floor, its job, what it may import)", short(mod, p)))
			continue
		case len(lines) > 1:
			out = append(out, fmt.Sprintf("package %s is in %d rows of the package table (lines %s): give it one", short(mod, p), len(lines), strings.Join(lines, ", ")))
		}
		f, _ := floorOf(mod, p, rows)
		rel := short(mod, p)
		for _, folder := range []string{rel, path.Dir(rel)} {
			if byFolder[folder] == nil {
				byFolder[folder] = map[int][]string{}
			}
			if !slices.Contains(byFolder[folder][f], rel) {
				byFolder[folder][f] = append(byFolder[folder][f], rel)
			}
		}
	}
	for _, folder := range slices.Sorted(maps.Keys(byFolder)) {
		fs := byFolder[folder]
		if len(fs) < 2 || folder == "." {
			continue
		}
		var parts []string
		for _, f := range slices.Sorted(maps.Keys(fs)) {
			parts = append(parts, fmt.Sprintf("floor %d: %s", f, strings.Join(fs[f], ", ")))
		}
		out = append(out, fmt.Sprintf("folder %s holds packages of %d floors (%s): give each floor a folder of its own", folder, len(fs), strings.Join(parts, "; ")))
	}
	for _, r := range rows {
		for _, pat := range slices.Concat(r.Packages, r.Allow, r.AllowTest) {
			if !ofModule(pat) || slices.ContainsFunc(own, func(p string) bool { return match(mod, pat, p, nil) }) {
				continue
			}
			out = append(out, fmt.Sprintf("the row of line %d names `%s`, which is no package of the module: mend the row", r.Line, pat))
		}
	}
	return out
}

// ofModule tells whether pattern is one of the module's packages (not
// the standard library's nor another module's).
func ofModule(pattern string) bool {
	first, _, _ := strings.Cut(pattern, "/")
	return pattern != Std && !strings.Contains(first, ".")
}

// sortedModulePackages are pkgs' module packages, sorted.
func sortedModulePackages(mod string, pkgs map[string]*pkg) []string {
	var paths []string
	for p := range pkgs {
		if inModule(mod, p) {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	return paths
}
