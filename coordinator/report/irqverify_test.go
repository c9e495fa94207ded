package report_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/linerate/linerate/coordinator/report"
	"github.com/linerate/linerate/coordinator/results"
	"github.com/linerate/linerate/coordinator/results/resultstest"
	"github.com/linerate/linerate/topology"
)

// offCPURun is the test run with s1's queue 1 IRQ (58, planned on CPU 4)
// also fired on CPU 9, and s2 without a record for want of queue IRQs.
func offCPURun() *results.Document {
	doc := resultstest.Run()
	s1 := doc.Run.Hosts[0].IRQVerify
	s1.IRQs[1].Fired["9"], s1.IRQs[1].OffCPU, s1.OffCPU = 12, true, 1
	s1.IRQs[2].Note = "counter went down on CPU 6 (the IRQ was freed and requested again): its count after is taken"
	doc.Run.Hosts[1].IRQVerify, doc.Run.Hosts[1].IRQVerifyReason = nil, topology.NoQueueIRQs
	return doc
}

// The text reports (the run's and the stored document's) show per host
// each queue IRQ's planned and serviced CPUs and the off-CPU ones, or the
// reason there is no record.
func TestReportTextIRQVerify(t *testing.T) {
	doc := offCPURun()
	for name, f := range map[string]func(*bytes.Buffer) error{
		"document": func(w *bytes.Buffer) error { return report.Table(w, doc) },
		"run":      func(w *bytes.Buffer) error { return report.RunTable(w, doc.Run) },
	} {
		out := string(render(t, f))
		for _, want := range []string{
			"s1 (ens801f0, over 10s): 4 queue IRQs, 1 fired off their planned CPUs\n",
			"4 (journal)  4:251000 9:12         yes\n",
			"  irq 59: counter went down on CPU 6",
			"s2: no queue IRQs (virtual device)\n",
			"r1 (ens801f0, over 10s): 4 queue IRQs, 0 fired off their planned CPUs\n",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("%s report lacks %q:\n%s", name, want, out)
			}
		}
	}
}

// The HTML report has a table per verified host, its off-CPU IRQ marked,
// and the reason for a host without one.
func TestReportHTMLIRQVerify(t *testing.T) {
	root, raw := parseHTML(t, offCPURun())
	tables := find(root, "table", map[string]string{"class": "irq-verify"})
	if len(tables) != 3 {
		t.Fatalf("%d irq-verify tables, want 3 (s1, r1, r2)", len(tables))
	}
	s1 := find(root, "table", map[string]string{"class": "irq-verify", "data-host": "s1", "data-off-cpu": "1"})
	if len(s1) != 1 {
		t.Fatal("s1's table with 1 off-CPU IRQ missing")
	}
	off := find(s1[0], "tr", map[string]string{"class": "off-cpu"})
	if len(off) != 1 || !bytes.Contains(raw, []byte("<td>4:251000 9:12</td>")) {
		t.Errorf("s1: %d off-CPU rows, want 1 (irq 58, fired on 4 and 9)", len(off))
	}
	if len(find(off[0], "tr", map[string]string{"data-irq": "58"})) != 1 {
		t.Error("the off-CPU row is not irq 58's")
	}
	reason := find(root, "p", map[string]string{"class": "irq-verify-reason", "data-host": "s2"})
	if len(reason) != 1 || !bytes.Contains(raw, []byte("Not verified: no queue IRQs (virtual device).")) {
		t.Error("s2's reason missing")
	}
	if !bytes.Contains(raw, []byte("counter went down on CPU 6")) {
		t.Error("irq 59's note missing")
	}
}
