package doctor

import (
	"fmt"
	"io"
	"strings"

	"github.com/linerate/linerate/topology/cpuset"
)

// WriteText renders a report for a person: a summary line, then each
// FAIL, WARN and KNOWN with its evidence, why and fix, then one line per
// PASS.
func WriteText(w io.Writer, r *Report) error {
	var b strings.Builder
	frame := "any frame size"
	if r.FrameSize > 0 {
		frame = fmt.Sprintf("%d B frames", r.FrameSize)
	}
	host := ""
	if r.Host != "" {
		host = r.Host + " "
	}
	known := ""
	if n := r.Count(Known); n > 0 {
		known = fmt.Sprintf(", %d KNOWN", n)
	}
	fmt.Fprintf(&b, "doctor %s%s (%s, %s, CPUs %s): %d FAIL, %d WARN%s, %d PASS\n",
		host, r.Iface, r.Role, frame, cpuset.Of(r.CPUs...), r.Count(Fail), r.Count(Warn), known, r.Count(Pass))
	for _, s := range []Status{Fail, Warn, Known} {
		for _, c := range r.Checks {
			if c.Status != s {
				continue
			}
			fmt.Fprintf(&b, "%-4s  %-12s  %s\n", c.Status, c.ID, c.Title)
			for _, e := range c.Evidence {
				fmt.Fprintf(&b, "      read: %s\n", e)
			}
			if c.Why != "" {
				fmt.Fprintf(&b, "      why:  %s\n", c.Why)
			}
			if c.Fix != "" {
				fix := c.Fix
				if c.FixClass != "" {
					fix += fmt.Sprintf(" (linerate doctor --fix-%s applies it)", c.FixClass)
				}
				fmt.Fprintf(&b, "      fix:  %s\n", fix)
			}
		}
	}
	for _, c := range r.Checks {
		if c.Status != Pass {
			continue
		}
		first := ""
		if len(c.Evidence) > 0 {
			first = ": " + c.Evidence[0]
		}
		fmt.Fprintf(&b, "PASS  %-12s  %s%s\n", c.ID, c.Title, first)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteApplied renders the settings a fix changed.
func WriteApplied(w io.Writer, applied []Applied) error {
	var b strings.Builder
	if len(applied) == 0 {
		b.WriteString("fixed nothing: every allowed fix was already in place or did not apply\n")
	}
	for _, a := range applied {
		fmt.Fprintf(&b, "fixed %s: %s %s: %s -> %s (journaled)\n", a.Class, a.Setting.Kind, a.Setting.Key, orAbsent(a.From), orAbsent(a.To))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func orAbsent(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
