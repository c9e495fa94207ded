package report

import (
	"fmt"
	"io"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/doctor"
)

// preflightView is a run's hosts' checks as a report shows them: a row per
// WARN, FAIL and KNOWN (a WARN its host's operator accepted, shown as
// such and no warning), what --preflight fix changed, and how many checks passed.
type preflightView struct {
	Rows  []preflightRow
	Fixed []fixedRow
	// Checks and Hosts count every check made and the hosts that made them.
	Checks, Hosts int
}

// preflightRow is one WARN, FAIL or KNOWN.
type preflightRow struct {
	Host, Check, Status, Evidence, Fix string
}

// fixedRow is one setting --preflight fix changed.
type fixedRow struct {
	Host, Class, Setting, From, To string
	Restored                       bool
}

// preflightOf is the view of res's checks; nil when no host has any (an
// agent that predates them, a run that ended before its Describe).
func preflightOf(res *coordinator.Result) *preflightView {
	if res == nil {
		return nil
	}
	v := &preflightView{}
	for _, h := range res.Hosts {
		if len(h.Checks) > 0 {
			v.Hosts++
		}
		v.Checks += len(h.Checks)
		for _, c := range h.Checks {
			if c.Status == doctor.Pass {
				continue
			}
			ev, fix := firstLine(c), c.Fix
			if why := doctor.KnownWhy(c); why != "" {
				// Accepted: why it needs no action, not the fix.
				ev, fix = firstLine(doctor.Check{Evidence: c.Evidence[:len(c.Evidence)-1]}), "known: "+why
			}
			v.Rows = append(v.Rows, preflightRow{Host: h.Name, Check: c.ID, Status: string(c.Status), Evidence: ev, Fix: fix})
		}
		for _, f := range h.Fixed {
			v.Fixed = append(v.Fixed, fixedRow{Host: h.Name, Class: string(f.Class), Setting: string(f.Setting.Kind) + " " + f.Setting.Key, From: f.From, To: f.To, Restored: h.FixesRestored})
		}
	}
	if v.Hosts == 0 {
		return nil
	}
	return v
}

// firstLine is a check's evidence in one line: its first item, with how
// many more there are.
func firstLine(c doctor.Check) string {
	switch len(c.Evidence) {
	case 0:
		return "-"
	case 1:
		return c.Evidence[0]
	}
	return fmt.Sprintf("%s (+%d more)", c.Evidence[0], len(c.Evidence)-1)
}

// preflightTable writes the PREFLIGHT section of a run's text report:
// every WARN, FAIL and KNOWN per host and what --preflight fix changed; one line
// when every check passed; nothing when no host was checked.
func preflightTable(w io.Writer, v *preflightView) {
	if v == nil {
		return
	}
	fmt.Fprintln(w)
	if len(v.Rows) == 0 {
		fmt.Fprintf(w, "preflight: all %d checks passed on %d hosts\n", v.Checks, v.Hosts)
	} else {
		tw := newTab(w, 0)
		fmt.Fprintln(tw, "PREFLIGHT\tCHECK\tSTATUS\tEVIDENCE\tFIX")
		for _, r := range v.Rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Host, r.Check, r.Status, r.Evidence, orDash(r.Fix))
		}
		tw.Flush()
	}
	if len(v.Fixed) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := newTab(w, 0)
	fmt.Fprintln(tw, "FIXED\tCLASS\tSETTING\tFROM\tTO\tRESTORED")
	for _, f := range v.Fixed {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", f.Host, f.Class, f.Setting, f.From, f.To, yesNo(f.Restored))
	}
	tw.Flush()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
