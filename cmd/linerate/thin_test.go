package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// This package parses flags and wires packages together: it reads
// nothing of the host, plans nothing and renders nothing (doc.go). The
// rules below say what that forbids of its non-test files, whatever
// their build tags, and TestThin holds the package to them.

// thinImports are the packages whose import alone is the work of
// another package: rendering, running programs, reading the host.
var thinImports = map[string]string{
	"text/tabwriter":                 "rendering",
	"text/template":                  "rendering",
	"html/template":                  "rendering",
	"encoding/csv":                   "rendering",
	"os/exec":                        "running programs",
	"golang.org/x/sys/unix":          "host reading",
	"github.com/vishvananda/netlink": "host reading",
	"github.com/cilium/ebpf":         "host reading",
	"github.com/linerate/linerate/internal/ethtool":    "host reading",
	"github.com/linerate/linerate/topology/interrupts": "host reading",
	"github.com/linerate/linerate/topology/irqname":    "host reading",
}

// thinCalls are the functions (import path and name) that do another
// package's work: read the host, plan threads, queues and rates, run a
// receiver's loop or compose a stored document.
var thinCalls = map[string]string{
	"net.Interfaces":                                           "host reading",
	"net.InterfaceByName":                                      "host reading",
	"net.InterfaceByIndex":                                     "host reading",
	"net.InterfaceAddrs":                                       "host reading",
	"github.com/linerate/linerate/topology.Inspect":            "host reading",
	"github.com/linerate/linerate/topology.OnlineCPUs":         "host reading",
	"github.com/linerate/linerate/topology.MTU":                "host reading",
	"github.com/linerate/linerate/topology.Neighbour":          "host reading",
	"github.com/linerate/linerate/topology.LinkSpeedMbps":      "host reading",
	"github.com/linerate/linerate/topology.PCIModel":           "host reading",
	"github.com/linerate/linerate/topology.ReadInterrupts":     "host reading",
	"github.com/linerate/linerate/topology.NewRecorder":        "host reading",
	"github.com/linerate/linerate/topology.LoadJournal":        "host reading",
	"github.com/linerate/linerate/topology.Verify":             "host reading",
	"github.com/linerate/linerate/topology.MakePlan":           "planning",
	"github.com/linerate/linerate/topology.SourceAddr":         "planning",
	"github.com/linerate/linerate/pktgen.Slots":                "planning",
	"github.com/linerate/linerate/pktgen.SlotLists":            "planning",
	"github.com/linerate/linerate/pktgen.SplitCount":           "planning",
	"github.com/linerate/linerate/pktgen.SplitRate":            "planning",
	"github.com/linerate/linerate/receiver.Start":              "the receiver's loop (receiver.Count)",
	"github.com/linerate/linerate/coordinator/results.FromRun": "composing a stored document (results.RunDocument)",
}

// hostPathPrefixes are where the host's own files are: a string literal
// that starts with one is a path read here instead of through a Root.
var hostPathPrefixes = []string{"/proc", "/sys", "/dev"}

// thinViolations are the imports, calls and host paths of the non-test
// Go files in dir that the rules above forbid, one line each.
func thinViolations(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var out []string
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		at := func(n ast.Node) string {
			p := fset.Position(n.Pos())
			return fmt.Sprintf("%s:%d", filepath.Base(p.Filename), p.Line)
		}
		imports := map[string]string{} // name in the file → import path
		for _, spec := range f.Imports {
			p, _ := strconv.Unquote(spec.Path.Value)
			local := path.Base(p)
			if spec.Name != nil {
				local = spec.Name.Name
			}
			imports[local] = p
			for forbidden, why := range thinImports {
				if p == forbidden || strings.HasPrefix(p, forbidden+"/") {
					out = append(out, fmt.Sprintf("%s: imports %s (%s)", at(spec), p, why))
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok {
					if p, ok := imports[x.Name]; ok {
						if why, ok := thinCalls[p+"."+n.Sel.Name]; ok {
							out = append(out, fmt.Sprintf("%s: uses %s.%s (%s)", at(n), x.Name, n.Sel.Name, why))
						}
					}
				}
			case *ast.BasicLit:
				if n.Kind == token.STRING {
					s, _ := strconv.Unquote(n.Value)
					for _, pre := range hostPathPrefixes {
						if s == pre || strings.HasPrefix(s, pre+"/") {
							out = append(out, fmt.Sprintf("%s: host path %q (read the host through a Root)", at(n), s))
						}
					}
				}
			}
			return true
		})
	}
	slices.Sort(out)
	return out, nil
}

// TestThin checks that cmd/linerate holds no host reading, no planning
// and no rendering, and that a file which does is caught.
func TestThin(t *testing.T) {
	got, err := thinViolations(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range got {
		t.Errorf("cmd/linerate does another package's work: %s", v)
	}

	dir := t.TempDir()
	bad := `package main

import (
	"net"
	"os"
	"os/exec"
	tw "text/tabwriter"

	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/topology"
)

func bad(r topology.Root) {
	_, _ = topology.Inspect(r, "eth0")
	_, _ = net.Interfaces()
	_, _ = os.ReadFile("/proc/net/arp")
	_ = pktgen.SplitCount(10, 3)
	_ = exec.Command
	_ = tw.NewWriter
	f := topology.MakePlan
	_ = f
}
`
	if err := os.WriteFile(filepath.Join(dir, "bad.go"), []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	// Tests may do all of it.
	if err := os.WriteFile(filepath.Join(dir, "bad_test.go"), []byte(strings.Replace(bad, "func bad", "func badTest", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err = thinViolations(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`bad.go:14: uses topology.Inspect (host reading)`,
		`bad.go:15: uses net.Interfaces (host reading)`,
		`bad.go:16: host path "/proc/net/arp" (read the host through a Root)`,
		`bad.go:17: uses pktgen.SplitCount (planning)`,
		`bad.go:20: uses topology.MakePlan (planning)`,
		`bad.go:6: imports os/exec (running programs)`,
		`bad.go:7: imports text/tabwriter (rendering)`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("a file that does another package's work: violations\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
