package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/doctor"
)

// A run's text report says warning: only of what a person should act on.
// A KNOWN check is a row of PREFLIGHT, shown as KNOWN with why; a host's
// note (queues wrapped onto fewer CPUs) a note: line; neither a warning.
// A WARN is still a PREFLIGHT row, and IRQs fired off their planned CPUs
// still a warning: line.
func TestRunTableWarnsOnlyToAct(t *testing.T) {
	res := allPassed()
	h := &res.Hosts[0]
	h.Checks = append(h.Checks, doctor.Check{ID: "clock", Status: doctor.Known,
		Evidence: []string{"adjtimex: synchronised false", "known to this host's operator (--known-check): a lab guest runs no time daemon"}})
	h.Notes = []string{"4 queues of eth1 on 2 CPUs (cpu2: q0 q2, cpu3: q1 q3): more queues than usable local CPUs, so they wrap round-robin, several per CPU"}
	text := func() string {
		var b bytes.Buffer
		if err := RunTable(&b, res); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	out := text()
	if strings.Contains(out, "warning:") || strings.Contains(out, "WARN") {
		t.Errorf("a clean run with a KNOWN check and a note warns:\n%s", out)
	}
	for _, want := range missingFrom(out,
		"PREFLIGHT  CHECK  STATUS  EVIDENCE",
		"s1         clock  KNOWN   adjtimex: synchronised false  known: a lab guest runs no time daemon\n",
		"\nnote: s1: 4 queues of eth1 on 2 CPUs (cpu2: q0 q2, cpu3: q1 q3)",
	) {
		t.Errorf("run table lacks %q:\n%s", want, out)
	}
	if strings.Contains(out, "all 13 checks passed") {
		t.Errorf("a KNOWN counted as passed:\n%s", out)
	}

	// A real WARN is a row, and IRQs off their CPUs a warning.
	h.Checks[0].Status = doctor.Warn
	res.Warnings = append(res.Warnings, coordinator.CheckWarning(h.Name, h.Checks[0]),
		"s1: 1 queue IRQs of eth1 fired off their planned CPUs: irq 42 (eth1-TxRx-1, queue 1) planned on CPU 1 fired on 1:2 5:7")
	out = text()
	if !strings.Contains(out, "  WARN  ") {
		t.Errorf("a WARN is not a PREFLIGHT row:\n%s", out)
	}
	if strings.Count(out, "warning:") != 1 || !strings.Contains(out, "\nwarning: s1: 1 queue IRQs of eth1 fired off their planned CPUs") {
		t.Errorf("want one warning: line, IRQs off their CPUs:\n%s", out)
	}
}
