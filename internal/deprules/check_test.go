package deprules

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// moduleRoot is the root of the module holding this package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			t.Fatalf("no go.mod above %s", wd)
		}
	}
}

// table is the package table of this tree's docs/ARCHITECTURE.md.
func table(t *testing.T) []Row {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(moduleRoot(t), "docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := ParseTable(doc)
	if err != nil {
		t.Fatalf("docs/ARCHITECTURE.md: %v", err)
	}
	return rows
}

// builds are the ways the tree is built: this system and another (for
// its `_other.go` and `!linux` files, as make crossbuild builds them),
// each with and without the traffic tag.
var builds = []Build{{}, {Tags: []string{"traffic"}}, {GOOS: "darwin"}, {GOOS: "darwin", Tags: []string{"traffic"}}}

// The tree keeps the package table whole, in every build: every import
// allowed by its row and on its floor or below, every package in exactly
// one row, no folder of two floors, no row naming what is not there.
func TestTreeKeepsTheTable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rows := table(t)
	var mod string
	var all []string
	for _, b := range builds {
		vs, err := Check(ctx, moduleRoot(t), b, rows)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vs {
			t.Errorf("%s: %s", b, v)
		}
		m, paths, err := Packages(ctx, moduleRoot(t), b)
		if err != nil {
			t.Fatal(err)
		}
		mod, all = m, append(all, paths...)
	}
	for _, p := range Layout(mod, slices.Compact(slices.Sorted(slices.Values(all))), rows) {
		t.Error(p)
	}
}

// writeModule lays out a module example.com/fake in a temp dir: pkgs
// maps a package dir to its imports (module-relative or external paths);
// a dir "p_test" is the test file of package p.
func writeModule(t *testing.T, pkgs map[string][]string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/fake\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for p, imports := range pkgs {
		file := filepath.Base(p) + ".go"
		if base, ok := strings.CutSuffix(p, "_test"); ok { // the package's test file
			p, file = base, filepath.Base(base)+"_test.go"
		}
		var b strings.Builder
		b.WriteString("package " + filepath.Base(p) + "\n\n")
		for _, imp := range imports {
			if !strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") && imp != "fmt" {
				imp = "example.com/fake/" + imp
			}
			b.WriteString("import _ \"" + imp + "\"\n")
		}
		if err := os.MkdirAll(filepath.Join(dir, p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p, file), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func checkFake(t *testing.T, pkgs map[string][]string) []Violation {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	t.Setenv("GOWORK", "off")
	t.Setenv("GOFLAGS", "-mod=mod")
	vs, err := Check(ctx, writeModule(t, pkgs), Build{}, table(t))
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

// A deliberate violation, topology importing the coordinator, is
// reported: exactly that edge, with the rule it breaks.
func TestCheckReportsTopologyImportingCoordinator(t *testing.T) {
	vs := checkFake(t, map[string][]string{
		"topology":    {"coordinator", "fmt"},
		"coordinator": {"fmt"},
		"agent":       {"topology"},
	})
	if len(vs) != 1 {
		t.Fatalf("violations %q, want exactly topology → coordinator", vs)
	}
	v := vs[0]
	if v.From != "topology" || v.To != "coordinator" || len(v.Via) != 0 || v.Test {
		t.Errorf("violation %+v, want topology → coordinator", v)
	}
	if got, want := v.String(), "topology imports coordinator: topology, pktgen and receiver never reach the control plane"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}

// What the data plane reaches through another package counts, even
// through one it may import, and the message names the way.
func TestCheckReportsTransitiveImport(t *testing.T) {
	vs := checkFake(t, map[string][]string{
		"pktgen":                  {"internal/errjoin"},
		"internal/errjoin":        {"internal/cluster/gossip"},
		"internal/cluster/gossip": nil,
	})
	var fromPktgen []Violation
	for _, v := range vs {
		if v.From == "pktgen" {
			fromPktgen = append(fromPktgen, v)
		}
	}
	if len(fromPktgen) != 1 || fromPktgen[0].To != "internal/cluster/gossip" || !slices.Equal(fromPktgen[0].Via, []string{"internal/errjoin"}) {
		t.Fatalf("violations %q, want pktgen → internal/cluster/gossip via internal/errjoin", vs)
	}
	if !strings.Contains(fromPktgen[0].String(), "(via internal/errjoin)") {
		t.Errorf("message %q does not name the way", fromPktgen[0])
	}
}

// receiver takes the pktgen package (the wire format), not its backends.
func TestCheckReceiverTakesOnlyTheWireFormat(t *testing.T) {
	vs := checkFake(t, map[string][]string{
		"receiver":   {"pktgen", "pktgen/xdp"},
		"pktgen":     nil,
		"pktgen/xdp": {"pktgen"},
	})
	if len(vs) != 1 || vs[0].From != "receiver" || vs[0].To != "pktgen/xdp" {
		t.Fatalf("violations %q, want only receiver → pktgen/xdp", vs)
	}
}

// The other rules: nothing imports cmd, the coordinator does not import
// the agent (its tests neither), topology stays on std.
func TestCheckOtherRules(t *testing.T) {
	vs := checkFake(t, map[string][]string{
		"cmd/linerate":         {"agent", "coordinator", "topology"},
		"agent":                nil,
		"coordinator":          nil,
		"coordinator_test":     {"agent"},
		"coordinator/campaign": {"agent", "cmd/linerate"},
		"topology":             {"internal/fsfixture"},
		"internal/fsfixture":   nil,
	})
	var got []string
	for _, v := range vs {
		edge := v.From + " → " + v.To
		if v.Test {
			edge += " (tests)"
		}
		got = append(got, edge)
	}
	want := []string{
		"coordinator → agent (tests)", // its tests neither
		"coordinator/campaign → agent",
		"coordinator/campaign → cmd/linerate",
		"topology → internal/fsfixture", // its tests may, its code may not
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations %q, want %q", got, want)
	}
}

// cmd/linerate/internal/vm may not take the lab (or anything of the project but
// safefile) into its code; its tests may use the vmtest harness.
func TestCheckVMStaysALeaf(t *testing.T) {
	vs := checkFake(t, map[string][]string{
		"cmd/linerate/internal/vm":      {"cmd/linerate/internal/lab", "internal/safefile"},
		"cmd/linerate/internal/vm_test": {"cmd/linerate/internal/vmtest"},
		"cmd/linerate/internal/vmtest":  nil,
		"cmd/linerate/internal/lab":     nil,
		"internal/safefile":             nil,
	})
	var got []string
	for _, v := range vs {
		got = append(got, v.From+" → "+v.To)
	}
	if want := []string{"cmd/linerate/internal/vm → cmd/linerate/internal/lab"}; !slices.Equal(got, want) {
		t.Errorf("violations %q, want %q", got, want)
	}
}
