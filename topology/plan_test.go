package topology

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/linerate/linerate/topology/cpuset"
	"github.com/linerate/linerate/topology/irqname"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.plan.json from the current plans")

// inspectFixture inspects one interface of a fixture.
func inspectFixture(t *testing.T, fixtureName, iface string) *NIC {
	t.Helper()
	r, _ := fixture(t, fixtureName)
	n, err := Inspect(r, iface)
	if err != nil {
		t.Fatalf("Inspect %s: %v", iface, err)
	}
	return n
}

// cpusOf maps queue i to cpus[i].
func cpusOf(cpus ...int) map[int]int {
	m := map[int]int{}
	for q, c := range cpus {
		m[q] = c
	}
	return m
}

func cpuRange(first, n int) []int { return irqRange(first, n) }

type planCase struct {
	name           string
	fixture, iface string
	opts           PlanOptions
	queueCPU       map[int]int // every planned queue → its CPU
	candidates     []int       // nil: not checked
	unplanned      int
	warnings       []string // substrings of the plan's warnings (beyond the NIC's), in order
	notes          []string // substrings of the plan's notes, in order
}

var planCases = []planCase{
	{name: "virtio one pair", fixture: "virtio-eth0", iface: "eth0", queueCPU: cpusOf(0), candidates: []int{0, 1}},
	{name: "virtio node 1, consecutive siblings", fixture: "virtio-mq", iface: "eth0",
		queueCPU: cpusOf(8, 10, 12, 14), candidates: []int{8, 10, 12, 14, 9, 11, 13, 15}},
	{name: "virtio shared vector", fixture: "virtio-shared", iface: "eth0", queueCPU: map[int]int{}},
	{name: "mlx5 16 queues: cores then siblings", fixture: "mlx5-new", iface: "ens1f0np0",
		queueCPU:   cpusOf(0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23),
		candidates: []int{0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23}},
	{name: "mlx5 threads 4", fixture: "mlx5-new", iface: "ens1f0np0", opts: PlanOptions{Threads: 4},
		queueCPU: cpusOf(0, 1, 2, 3), unplanned: 12},
	{name: "mlx5 threads 16", fixture: "mlx5-new", iface: "ens1f0np0", opts: PlanOptions{Threads: 16},
		queueCPU: cpusOf(0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23)},
	{name: "mlx5 exclude 0-3: their siblings count as cores", fixture: "mlx5-new", iface: "ens1f0np0",
		opts:       PlanOptions{Exclude: cpuset.MustParseList("0-3")},
		candidates: []int{4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23},
		queueCPU:   cpusOf(4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 4, 5, 6, 7),
		notes:      []string{"16 queues of ens1f0np0 on 12 CPUs (cpu4: q0 q12, cpu5: q1 q13, cpu6: q2 q14, cpu7: q3 q15, cpu16: q4, cpu17: q5, cpu18: q6, cpu19: q7, cpu20: q8, cpu21: q9, cpu22: q10, cpu23: q11): more queues than usable local CPUs, so they wrap round-robin, several per CPU"}},
	{name: "mlx5 exclude the whole node", fixture: "mlx5-new", iface: "ens1f0np0",
		opts:       PlanOptions{Exclude: cpuset.MustParseList("0-7,16-23")},
		candidates: []int{8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31},
		queueCPU:   cpusOf(8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31),
		warnings:   []string{"every local CPU of ens1f0np0 (0-7,16-23) is isolated or excluded: using CPUs 8-15,24-31 outside the NIC's node"}},
	{name: "mlx5 old: 16 queues wrap over 8 local CPUs", fixture: "mlx5-old-2port", iface: "enp129s0f0",
		candidates: []int{4, 5, 6, 7, 12, 13, 14, 15},
		queueCPU:   cpusOf(4, 5, 6, 7, 12, 13, 14, 15, 4, 5, 6, 7, 12, 13, 14, 15),
		notes:      []string{"16 queues of enp129s0f0 on 8 CPUs (cpu4: q0 q8, cpu5: q1 q9, cpu6: q2 q10, cpu7: q3 q11, cpu12: q4 q12, cpu13: q5 q13, cpu14: q6 q14, cpu15: q7 q15): more queues than usable local CPUs, so they wrap round-robin, several per CPU"}},
	{name: "mlx5 old: threads 8 does not wrap", fixture: "mlx5-old-2port", iface: "enp129s0f0",
		opts: PlanOptions{Threads: 8}, queueCPU: cpusOf(4, 5, 6, 7, 12, 13, 14, 15), unplanned: 8},
	{name: "i40e node 1", fixture: "i40e", iface: "ens801f0", queueCPU: cpusOf(cpuRange(10, 8)...)},
	{name: "ice unpaired rx-8 on the first sibling", fixture: "ice", iface: "ens785f0np0",
		queueCPU: cpusOf(0, 1, 2, 3, 4, 5, 6, 7, 8)},
	{name: "ixgbe", fixture: "ixgbe", iface: "enp1s0f0", queueCPU: cpusOf(cpuRange(0, 8)...),
		candidates: []int{0, 1, 2, 3, 4, 5, 6, 7}},
	{name: "igb", fixture: "igb", iface: "eno1", queueCPU: cpusOf(0, 1, 2, 3)},
	{name: "bnxt split rings pair rx i with tx i+4", fixture: "bnxt", iface: "eth0", queueCPU: cpusOf(0, 1, 2, 3)},
	{name: "ena", fixture: "ena", iface: "eth0", queueCPU: cpusOf(0, 1, 2, 3)},
	{name: "gve tx and rx halves", fixture: "gve", iface: "ens4", queueCPU: cpusOf(0, 1, 2, 3)},
	{name: "hns3", fixture: "hns3", iface: "enp125s0f0", queueCPU: cpusOf(0, 1, 2, 3)},
	{name: "numa absent", fixture: "numa-absent", iface: "enp2s0", queueCPU: cpusOf(0), candidates: []int{0, 1, 2, 3}},
	{name: "numa -1, siblings 0-1", fixture: "numa-minus1", iface: "enP30832s1",
		queueCPU: cpusOf(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15)},
	{name: "128 CPUs, node 1 from local_cpus", fixture: "host128", iface: "ens5f0np0", queueCPU: cpusOf(cpuRange(64, 16)...)},
	{name: "offline CPU 2", fixture: "offline-cpu", iface: "enp5s0", candidates: []int{0, 1, 3},
		queueCPU: cpusOf(0, 1, 3, 0), notes: []string{"4 queues of enp5s0 on 3 CPUs (cpu0: q0 q3, cpu1: q1, cpu3: q2): more queues than usable local CPUs, so they wrap round-robin, several per CPU"}},
	{name: "offline CPU 2, threads 3", fixture: "offline-cpu", iface: "enp5s0", opts: PlanOptions{Threads: 3},
		queueCPU: cpusOf(0, 1, 3), unplanned: 1},
	{name: "isolated and nohz_full excluded", fixture: "isolated", iface: "ens2f0np0",
		candidates: []int{0, 1, 6, 7, 5}, queueCPU: cpusOf(0, 1, 6, 7)},
	{name: "isolated plus exclude", fixture: "isolated", iface: "ens2f0np0",
		opts: PlanOptions{Exclude: cpuset.Of(0, 6)}, candidates: []int{1, 7, 5},
		queueCPU: cpusOf(1, 7, 5, 1), notes: []string{"4 queues of ens2f0np0 on 3 CPUs (cpu1: q0 q3, cpu5: q2, cpu7: q1): more queues than usable local CPUs, so they wrap round-robin, several per CPU"}},
	{name: "all local CPUs isolated", fixture: "isolated-all", iface: "ens1f0",
		candidates: []int{0, 1, 2, 3}, queueCPU: cpusOf(0, 1),
		warnings: []string{"every local CPU of ens1f0 (4-7) is isolated or excluded: using CPUs 0-3 outside the NIC's node"}},
	{name: "xen by name", fixture: "xen-no-msi", iface: "eth1", queueCPU: cpusOf(0, 1)},
	{name: "managed", fixture: "managed", iface: "ens3f0np0", queueCPU: cpusOf(0, 1, 2, 3)},
	{name: "interface down", fixture: "iface-down", iface: "ens1f1", queueCPU: map[int]int{}},
}

func TestMakePlan(t *testing.T) {
	for _, c := range planCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			n := inspectFixture(t, c.fixture, c.iface)
			nicWarnings := append([]string(nil), n.Warnings...)
			p, err := MakePlan(n, c.opts)
			if err != nil {
				t.Fatalf("MakePlan: %v", err)
			}
			if c.candidates != nil && !reflect.DeepEqual(p.Candidates, c.candidates) {
				t.Errorf("candidates %v, want %v", p.Candidates, c.candidates)
			}
			got := map[int]int{}
			dirs := map[int][]irqname.Dir{}
			for _, a := range p.Assignments {
				if cpu, ok := got[a.Queue]; ok && cpu != a.CPU {
					t.Errorf("queue %d split over CPUs %d and %d (irq %d %s)", a.Queue, cpu, a.CPU, a.IRQ, a.Dir)
				}
				got[a.Queue] = a.CPU
				dirs[a.Queue] = append(dirs[a.Queue], a.Dir)
				if !n.OnlineCPUs.Contains(a.CPU) || n.Isolated.Contains(a.CPU) || c.opts.Exclude.Contains(a.CPU) {
					t.Errorf("irq %d planned on CPU %d: offline, isolated or excluded", a.IRQ, a.CPU)
				}
			}
			if !reflect.DeepEqual(got, c.queueCPU) {
				t.Errorf("queue→CPU %v, want %v", got, c.queueCPU)
			}
			// Every vector of a planned queue is assigned: rx with tx.
			for _, v := range n.Vectors {
				if _, planned := got[v.Queue]; planned {
					found := false
					for _, a := range p.Assignments {
						found = found || a.IRQ == v.IRQ
					}
					if !found {
						t.Errorf("irq %d (queue %d %s) left out of a planned queue", v.IRQ, v.Queue, v.Dir)
					}
				}
			}
			if len(p.Unplanned) != c.unplanned {
				t.Errorf("unplanned %v, want %d", p.Unplanned, c.unplanned)
			}
			for _, u := range p.Unplanned {
				if want := fmt.Sprintf("beyond --threads %d", c.opts.Threads); !strings.Contains(u.Reason, want) {
					t.Errorf("unplanned irq %d reason %q, want %q", u.IRQ, u.Reason, want)
				}
			}
			if len(p.Warnings) < len(nicWarnings) || !slices.Equal(p.Warnings[:len(nicWarnings)], nicWarnings) {
				t.Errorf("plan warnings %q do not start with the NIC's %q", p.Warnings, nicWarnings)
			}
			extra := p.Warnings[len(nicWarnings):]
			if len(extra) != len(c.warnings) {
				t.Errorf("plan warnings %q, want %d containing %q", extra, len(c.warnings), c.warnings)
			} else {
				for i, w := range c.warnings {
					if !strings.Contains(extra[i], w) {
						t.Errorf("plan warning %q, want it to contain %q", extra[i], w)
					}
				}
			}
			// Queues wrapping onto fewer CPUs is a fact of the plan,
			// never a warning: it asks nothing of a person. Its note
			// names each CPU's queues (a queue's vectors are one
			// queue); a queue per CPU, or --threads, says nothing.
			if !slices.Equal(p.Notes, c.notes) {
				t.Errorf("plan notes %q, want %q", p.Notes, c.notes)
			}
			if !slices.Equal(n.Warnings, nicWarnings) {
				t.Errorf("MakePlan changed the NIC's warnings to %q", n.Warnings)
			}
		})
	}
}

// TestPlanBnxtPairs checks the split-ring pairing vector by vector.
func TestPlanBnxtPairs(t *testing.T) {
	n := inspectFixture(t, "bnxt", "eth0")
	p, err := MakePlan(n, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range p.Assignments {
		got = append(got, fmt.Sprintf("%s→%d", a.Name, a.CPU))
	}
	want := []string{"eth0-rx-0→0", "eth0-tx-4→0", "eth0-rx-1→1", "eth0-tx-5→1",
		"eth0-rx-2→2", "eth0-tx-6→2", "eth0-rx-3→3", "eth0-tx-7→3"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("assignments %v, want %v", got, want)
	}
}

func TestPlanThreadErrors(t *testing.T) {
	for _, c := range []struct {
		fixture, iface string
		threads        int
		tooMany        bool
		message        []string
	}{
		{"mlx5-new", "ens1f0np0", 17, true, []string{"17", "queues 16", "local CPUs 16"}},
		{"mlx5-old-2port", "enp129s0f0", 9, true, []string{"9", "queues 16", "local CPUs 8", "= 8"}},
		{"offline-cpu", "enp5s0", 4, true, []string{"4", "queues 4", "local CPUs 3"}},
		{"isolated", "ens2f0np0", 5, true, []string{"5", "queues 4"}},
		{"virtio-shared", "eth0", 1, true, []string{"queues 0"}},
		{"ixgbe", "enp1s0f0", -1, false, []string{"-1"}},
	} {
		n := inspectFixture(t, c.fixture, c.iface)
		p, err := MakePlan(n, PlanOptions{Threads: c.threads})
		if err == nil {
			t.Errorf("%s threads %d: plan %v, want an error", c.fixture, c.threads, p.Assignments)
			continue
		}
		if errors.Is(err, ErrTooManyThreads) != c.tooMany {
			t.Errorf("%s threads %d: errors.Is(%v, ErrTooManyThreads) = %v", c.fixture, c.threads, err, !c.tooMany)
		}
		for _, m := range c.message {
			if !strings.Contains(err.Error(), m) {
				t.Errorf("%s threads %d: error %q does not mention %q", c.fixture, c.threads, err, m)
			}
		}
	}
}

func TestPlanNoUsableCPU(t *testing.T) {
	n := inspectFixture(t, "isolated-all", "ens1f0")
	_, err := MakePlan(n, PlanOptions{Exclude: cpuset.MustParseList("0-3")})
	if err == nil || !strings.Contains(err.Error(), "no usable CPU") {
		t.Fatalf("MakePlan with every CPU isolated or excluded: err = %v, want no usable CPU", err)
	}
}

// goldenCases are the fixtures whose plan JSON is pinned in
// testdata/golden/<name>.plan.json: the CLI's JSON contract.
var goldenCases = []struct{ name, fixture, iface string }{
	{"virtio-eth0", "virtio-eth0", "eth0"},
	{"xen-no-msi-4x", "xen-no-msi-4x", "eth1"},
	{"virtio-mq", "virtio-mq", "eth0"},
	{"virtio-shared", "virtio-shared", "eth0"},
	{"mlx5-new", "mlx5-new", "ens1f0np0"},
	{"mlx5-old-2port", "mlx5-old-2port", "enp129s0f0"},
	{"i40e", "i40e", "ens801f0"},
	{"ice", "ice", "ens785f0np0"},
	{"ixgbe", "ixgbe", "enp1s0f0"},
	{"igb", "igb", "eno1"},
	{"bnxt", "bnxt", "eth0"},
	{"ena", "ena", "eth0"},
	{"gve", "gve", "ens4"},
	{"hns3", "hns3", "enp125s0f0"},
	{"numa-absent", "numa-absent", "enp2s0"},
	{"numa-minus1", "numa-minus1", "enP30832s1"},
	{"numa-minus1-netvsc", "numa-minus1", "eth0"},
	{"host128", "host128", "ens5f0np0"},
	{"offline-cpu", "offline-cpu", "enp5s0"},
	{"isolated", "isolated", "ens2f0np0"},
	{"isolated-all", "isolated-all", "ens1f0"},
	{"xen-no-msi", "xen-no-msi", "eth1"},
	{"managed", "managed", "ens3f0np0"},
	{"iface-down", "iface-down", "ens1f1"},
	{"virtual", "virtual", "eth0"},
}

func TestPlanReportGolden(t *testing.T) {
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			n := inspectFixture(t, c.fixture, c.iface)
			p, err := MakePlan(n, PlanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.MarshalIndent(PlanReport(p), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			file := filepath.Join("testdata", "golden", c.name+".plan.json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run go test ./topology -run TestPlanReportGolden -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("plan JSON differs from %s (rerun with -update after checking):\n%s", file, got)
			}
		})
	}
}

// TestReportJSONShape checks the JSON contract that goldens only show by
// example: key set and order, empty lists as [], cpu only in plans,
// effective and managed only when known.
func TestReportJSONShape(t *testing.T) {
	keys := func(t *testing.T, b []byte) []string {
		t.Helper()
		dec := json.NewDecoder(bytes.NewReader(b))
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			t.Fatalf("report is not an object: %s", b)
		}
		var out []string
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, tok.(string))
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
		}
		return out
	}
	for _, c := range []struct{ fixture, iface string }{
		{"virtio-shared", "eth0"}, {"managed", "ens3f0np0"}, {"mlx5-old-2port", "enp129s0f0"}, {"ixgbe", "enp1s0f0"},
	} {
		n := inspectFixture(t, c.fixture, c.iface)
		p, err := MakePlan(n, PlanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		show, _ := json.Marshal(ShowReport(n))
		plan, _ := json.Marshal(PlanReport(p))
		want := []string{"iface", "driver", "pci", "numa_node", "local_cpus", "queues", "skipped", "warnings"}
		wantPlan := want
		if len(p.Notes) > 0 { // notes only when the plan has some
			wantPlan = append(slices.Clone(want), "notes")
		}
		for i, b := range [][]byte{show, plan} {
			want := want
			if i == 1 {
				want = wantPlan
			}
			if k := keys(t, b); !reflect.DeepEqual(k, want) {
				t.Errorf("%s: top-level keys %v, want %v in %s", c.fixture, k, want, b)
			}
			for _, empty := range []string{`"queues":null`, `"skipped":null`, `"warnings":null`, `"local_cpus":null`} {
				if bytes.Contains(b, []byte(empty)) {
					t.Errorf("%s: %s in %s", c.fixture, empty, b)
				}
			}
		}
		if bytes.Contains(show, []byte(`"cpu"`)) {
			t.Errorf("%s: show report has a cpu: %s", c.fixture, show)
		}
		var s, pl struct {
			Queues []map[string]any `json:"queues"`
		}
		if err := json.Unmarshal(show, &s); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(plan, &pl); err != nil {
			t.Fatal(err)
		}
		if len(s.Queues) != len(n.Vectors) || len(pl.Queues) != len(n.Vectors) {
			t.Fatalf("%s: %d show and %d plan queues for %d vectors", c.fixture, len(s.Queues), len(pl.Queues), len(n.Vectors))
		}
		for i, q := range pl.Queues {
			if _, ok := q["cpu"]; !ok {
				t.Errorf("%s: plan queue %v has no cpu", c.fixture, q)
			}
			delete(q, "cpu")
			if !reflect.DeepEqual(q, s.Queues[i]) {
				t.Errorf("%s: plan queue %v differs from show queue %v beyond cpu", c.fixture, q, s.Queues[i])
			}
			v := n.Vectors[i]
			if _, ok := q["effective"]; ok != (v.Effective != "") {
				t.Errorf("%s: irq %d effective key present %v, Effective %q", c.fixture, v.IRQ, ok, v.Effective)
			}
			if _, ok := q["managed"]; ok != v.Managed {
				t.Errorf("%s: irq %d managed key present %v, Managed %v", c.fixture, v.IRQ, ok, v.Managed)
			}
		}
	}
}

// TestPlanReportUnplanned checks that queues cut by --threads are reported
// as skipped after the NIC's own skipped IRQs.
func TestPlanReportUnplanned(t *testing.T) {
	n := inspectFixture(t, "ixgbe", "enp1s0f0")
	p, err := MakePlan(n, PlanOptions{Threads: 6})
	if err != nil {
		t.Fatal(err)
	}
	r := PlanReport(p)
	if len(r.Queues) != 6 {
		t.Errorf("%d planned queues, want 6", len(r.Queues))
	}
	var got []string
	for _, s := range r.Skipped {
		got = append(got, fmt.Sprintf("%d %s", s.IRQ, s.Name))
	}
	want := []string{"37 enp1s0f0", "35 enp1s0f0-TxRx-6", "36 enp1s0f0-TxRx-7"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("skipped %v, want %v", got, want)
	}
	if len(ShowReport(n).Skipped) != 1 {
		t.Errorf("show report skipped %v, want only the link vector", ShowReport(n).Skipped)
	}
}
