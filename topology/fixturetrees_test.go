package topology

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/linerate/linerate/topology/cpuset"
)

// does not parse right yet, by fixture name (none today).
var knownParseBugs = map[string]string{}

// TestFixtureTrees checks that every fixture tree is self-consistent the
// way a real host is: symlinks resolve inside the tree, /proc/interrupts
// parses and has a column per online CPU, the action names of
// /sys/kernel/irq and /proc/irq/N/<name>/ agree with /proc/interrupts,
// masks agree with lists, and every MSI-X vector has affinity files.
func TestFixtureTrees(t *testing.T) {
	trees, err := filepath.Glob(filepath.Join("testdata", "*.tree"))
	if err != nil || len(trees) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, tree := range trees {
		name := strings.TrimSuffix(filepath.Base(tree), ".tree")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r, dir := fixture(t, name)
			err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.Type()&fs.ModeSymlink == 0 {
					return err
				}
				real, err := filepath.EvalSymlinks(p)
				if err != nil {
					t.Errorf("dangling link %s: %v", strings.TrimPrefix(p, dir), err)
				} else if !strings.HasPrefix(real, dir+string(filepath.Separator)) {
					t.Errorf("link %s leaves the tree: %s", strings.TrimPrefix(p, dir), real)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}

			table, err := ReadInterrupts(r)
			if err != nil {
				t.Fatalf("parse /proc/interrupts: %v", err)
			}
			online, err := readString(r, "/sys/devices/system/cpu/online")
			if err != nil {
				t.Fatal(err)
			}
			if got := cpuset.Of(table.CPUs...).String(); got != online {
				t.Errorf("/proc/interrupts columns %v, online CPUs %s", table.CPUs, online)
			}
			possible, _ := cpuset.ParseList(mustRead(t, r, "/sys/devices/system/cpu/possible"), 0)

			parseBug := ""
			defer func() {
				if parseBug != "" && !t.Failed() {
					t.Skipf("known bug: %s", parseBug)
				}
			}()
			sameActions := func(irq int, names []string, source string) {
				row, ok := table.ByNumber(irq)
				if !ok {
					if len(names) > 0 {
						t.Errorf("irq %d has actions %q in %s but no /proc/interrupts line", irq, names, source)
					}
					return
				}
				if !slices.Equal(row.Actions, names) && !(len(names) == 0 && len(row.Actions) == 0) {
					if bug := knownParseBugs[name]; bug != "" {
						parseBug = bug
						return
					}
					t.Errorf("irq %d: actions %q in %s, %q in /proc/interrupts", irq, names, source, row.Actions)
				}
			}
			if ents, err := r.ReadDir("/sys/kernel/irq"); err == nil {
				for _, e := range ents {
					irq, _ := strconv.Atoi(e.Name())
					s := mustRead(t, r, "/sys/kernel/irq/"+e.Name()+"/actions")
					var names []string
					if s != "" {
						names = strings.Split(s, ",")
					}
					sameActions(irq, names, "/sys/kernel/irq")
				}
			}
			procIRQs, _ := r.ReadDir("/proc/irq")
			for _, e := range procIRQs {
				irq, _ := strconv.Atoi(e.Name())
				ents, _ := r.ReadDir("/proc/irq/" + e.Name())
				var names []string
				for _, d := range ents {
					if d.IsDir() {
						names = append(names, d.Name())
					}
				}
				if len(names) > 0 {
					sameActions(irq, names, "/proc/irq/N/<name>/")
				}
				base := "/proc/irq/" + e.Name() + "/"
				list, err := cpuset.ParseList(mustRead(t, r, base+"smp_affinity_list"), possible.Max()+1)
				if err != nil {
					t.Errorf("irq %d: %v", irq, err)
				}
				if m, err := readString(r, base+"smp_affinity"); err == nil {
					if mask, err := cpuset.ParseMask(m); err != nil || !mask.Equal(list) || len(m) != len(list.Mask(possible.Max()+1)) {
						t.Errorf("irq %d: smp_affinity %q does not match smp_affinity_list %s (%v)", irq, m, list, err)
					}
				}
				if eff, err := readString(r, base+"effective_affinity_list"); err == nil {
					if e, err := cpuset.ParseList(eff, 0); err != nil || !e.IsSubsetOf(list) {
						t.Errorf("irq %d: effective %q not within %s", irq, eff, list)
					}
				}
			}

			ifaces, _ := r.ReadDir("/sys/class/net")
			for _, e := range ifaces {
				n, err := Inspect(r, e.Name())
				if errors.Is(err, ErrNoDevice) {
					continue
				}
				if err != nil {
					t.Errorf("inspect %s: %v", e.Name(), err)
					continue
				}
				if l, err := readString(r, n.DevPath+"/local_cpulist"); err == nil {
					if m, err := readString(r, n.DevPath+"/local_cpus"); err == nil {
						lc, _ := cpuset.ParseList(l, 0)
						if mc, err := cpuset.ParseMask(m); err != nil || !mc.Equal(lc) {
							t.Errorf("%s: local_cpus %q, local_cpulist %q", e.Name(), m, l)
						}
					}
				}
				msi, _ := r.ReadDir(n.DevPath + "/msi_irqs")
				for _, m := range msi {
					if s := mustRead(t, r, n.DevPath+"/msi_irqs/"+m.Name()); s != "msix" {
						t.Errorf("%s: msi_irqs/%s reads %q", e.Name(), m.Name(), s)
					}
				}
			}
		})
	}
}

func mustRead(t *testing.T, r Root, name string) string {
	t.Helper()
	s, err := readString(r, name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
