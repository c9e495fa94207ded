package deprules

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// A table says what it allows in words the check knows and names each
// package once; anything else is refused with the line.
func TestParseTableRefuses(t *testing.T) {
	const head = "intro\n\n| floor | package | its one job | may import |\n|---|---|---|---|\n"
	for _, tc := range []struct{ name, rows, want string }{
		{"unknown word", "| 1 | `a` | job | std, leftpad |\n", `line 5: may import: "leftpad" is neither`},
		{"no package", "| 1 | a | job | std |\n", "line 5: the package column"},
		{"package twice", "| 1 | `a` | job | std |\n| 2 | `b`, `a` | job | std |\n", "line 6: package a is already the row of line 5"},
		{"floor", "| one | `a` | job | std |\n", `line 5: floor "one"`},
		{"cells", "| 1 | `a` | std |\n", "line 5: 3 cells, want 4"},
		{"tests part", "| 1 | `a` | job | std; go-cmp |\n", `line 5: may import: "go-cmp" after the ';'`},
		{"empty item", "| 1 | `a` | job | std,, x/sys |\n", "line 5: may import: an empty item"},
		{"no rows", "\nafter\n", "line 5: the package table has no rows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseTable([]byte(head + tc.rows))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := ParseTable([]byte("no table here\n")); err == nil || !strings.Contains(err.Error(), "no package table") {
		t.Errorf("a document without the table: error %v", err)
	}
}

// A row reads into its packages, floor and allowed imports, the words
// expanded.
func TestParseTableRow(t *testing.T) {
	rows, err := ParseTable([]byte("| floor | package | its one job | may import |\n|---|---|---|---|\n" +
		"| 3 | `coordinator`, `coordinator/x` | plan, and a `type` in prose | std, grpc, `pktgen`; tests: go-cmp, `internal/fsfixture` |\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := Row{Line: 3, Floor: 3, Packages: []string{"coordinator", "coordinator/x"},
		Allow:     []string{Std, "google.golang.org/grpc/...", "pktgen"},
		AllowTest: []string{"github.com/google/go-cmp/...", "internal/fsfixture"},
		MayImport: "std, grpc, `pktgen`; tests: go-cmp, `internal/fsfixture`"}
	if len(rows) != 1 || !rowsEqual(rows[0], want) {
		t.Errorf("rows %+v, want %+v", rows, want)
	}
}

func rowsEqual(a, b Row) bool {
	return a.Line == b.Line && a.Floor == b.Floor && slices.Equal(a.Packages, b.Packages) &&
		slices.Equal(a.Allow, b.Allow) && slices.Equal(a.AllowTest, b.AllowTest) && a.MayImport == b.MayImport
}

// Every row of the table is a rule that bites: for each row, one of its
// packages is given an import its row does not allow (a package of a
// higher floor where there is one, else one nobody lists), once in its
// code and once in its tests, and the row's own rule reports exactly
// that edge, as does the whole check.
func TestEveryRowBites(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rows := table(t)
	mod, pkgs, err := load(ctx, moduleRoot(t), Build{Tags: []string{"traffic"}})
	if err != nil {
		t.Fatal(err)
	}
	own := sortedModulePackages(mod, pkgs)
	const unlisted = "example.com/unlisted"
	for _, r := range rows {
		var from string
		for _, p := range own {
			if f, ok := floorOf(mod, p, []Row{r}); ok && f == r.Floor {
				from = p
				break
			}
		}
		if from == "" {
			t.Errorf("row of line %d (%s): no package of the tree is in it", r.Line, strings.Join(r.Packages, ", "))
			continue
		}
		to := unlisted
		for _, p := range own {
			if f, _ := floorOf(mod, p, rows); f > r.Floor {
				to = p
				break
			}
		}
		before := check(mod, pkgs, []Rule{r.Rule()})
		for _, test := range []bool{false, true} {
			broken := clonePkgs(pkgs)
			broken[unlisted] = &pkg{ImportPath: unlisted}
			p := broken[from]
			if test {
				p.TestImports = append(slices.Clone(p.TestImports), to)
			} else {
				p.Imports = append(slices.Clone(p.Imports), to)
			}
			want := Violation{From: short(mod, from), To: short(mod, to), Test: test}
			if vs := newViolations(check(mod, broken, []Rule{r.Rule()}), before); len(vs) != 1 || !sameEdge(vs[0], want) || !strings.Contains(vs[0].String(), fmt.Sprintf("(line %d)", r.Line)) {
				t.Errorf("row of line %d, %s imports %s (tests %v): its rule reported %q, want exactly that edge", r.Line, want.From, want.To, test, vs)
			}
			all := check(mod, broken, RulesOf(rows))
			all = append(all, floors(mod, broken, rows)...)
			if !slices.ContainsFunc(all, func(v Violation) bool { return sameEdge(v, want) }) {
				t.Errorf("row of line %d, %s imports %s (tests %v): the whole check missed it: %q", r.Line, want.From, want.To, test, all)
			}
		}
	}
}

// newViolations are those of after that before does not have (a tree
// that already breaks a row is TestTreeKeepsTheTable's to report).
func newViolations(after, before []Violation) []Violation {
	var out []Violation
	for _, v := range after {
		if !slices.ContainsFunc(before, func(b Violation) bool { return sameEdge(b, v) }) {
			out = append(out, v)
		}
	}
	return out
}

func sameEdge(a, b Violation) bool { return a.From == b.From && a.To == b.To && a.Test == b.Test }

func clonePkgs(pkgs map[string]*pkg) map[string]*pkg {
	out := make(map[string]*pkg, len(pkgs))
	for k, v := range pkgs {
		c := *v
		out[k] = &c
	}
	return out
}

// No package imports one above it, whatever its row allows; a package in
// no row or in two, a folder of two floors and a row naming no package
// are named.
func TestFloorsAndFolders(t *testing.T) {
	const mod = "example.com/m"
	rows := []Row{
		{Line: 1, Floor: 2, Packages: []string{"top/..."}, Allow: []string{"..."}},
		{Line: 2, Floor: 1, Packages: []string{"low"}, Allow: []string{"..."}},
		{Line: 3, Floor: 0, Packages: []string{"low/helper"}, Allow: []string{Std, "gone"}, AllowTest: []string{"github.com/google/go-cmp/..."}},
		{Line: 4, Floor: 2, Packages: []string{"top/twice"}, Allow: []string{Std}},
		{Line: 5, Floor: 0, Packages: []string{"moved/away"}, Allow: []string{Std}},
	}
	pkgs := map[string]*pkg{
		mod + "/top":        {ImportPath: mod + "/top", Imports: []string{mod + "/low"}},
		mod + "/low":        {ImportPath: mod + "/low", TestImports: []string{mod + "/top"}},
		mod + "/low/helper": {ImportPath: mod + "/low/helper"},
	}
	vs := floors(mod, pkgs, rows)
	if len(vs) != 1 || vs[0].From != "low" || vs[0].To != "top" || !vs[0].Test || !strings.Contains(vs[0].Rule, "floor 1 imports floor 2") {
		t.Errorf("floors %q, want low (tests) → top, floor 1 imports floor 2", vs)
	}
	got := Layout(mod, []string{mod + "/top", mod + "/top/twice", mod + "/low", mod + "/low/helper", mod + "/stray", "fmt"}, rows)
	want := []string{
		"package stray is in no row of the package table",
		"package top/twice is in 2 rows of the package table (lines 1, 4)",
		"folder low holds packages of 2 floors (floor 0: low/helper; floor 1: low)",
		"the row of line 3 names `gone`, which is no package of the module",
		"the row of line 5 names `moved/away`, which is no package of the module",
	}
	if len(got) != len(want) {
		t.Fatalf("layout %q, want %q", got, want)
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("layout[%d] %q, want %q", i, got[i], want[i])
		}
	}
}

// The rules that hold across rows are the ones the document states under
// its table, word for word.
func TestCrossRulesAreTheDocuments(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(moduleRoot(t), "docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range Cross {
		if !strings.Contains(string(doc), r.Name) {
			t.Errorf("docs/ARCHITECTURE.md does not state the rule %q", r.Name)
		}
	}
}
