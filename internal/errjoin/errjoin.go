// Package errjoin joins errors the way errors.Join does, but says each
// cause once: forty threads that fail for one reason are one line with
// a count, not forty lines.
package errjoin

import (
	"fmt"
	"strings"
)

// Distinct joins errs (nils skipped) with one line per distinct message,
// in first-seen order; a message that several errors share says how many
// ("… (40 times)"). errors.Is and errors.As see every error given. nil
// when there is none.
func Distinct(errs ...error) error {
	var d distinct
	index := map[string]int{}
	for _, err := range errs {
		if err == nil {
			continue
		}
		d.all = append(d.all, err)
		msg := err.Error()
		if i, ok := index[msg]; ok {
			d.counts[i]++
			continue
		}
		index[msg] = len(d.msgs)
		d.msgs, d.counts = append(d.msgs, msg), append(d.counts, 1)
	}
	if len(d.all) == 0 {
		return nil
	}
	return &d
}

type distinct struct {
	all    []error
	msgs   []string
	counts []int
}

func (d *distinct) Error() string {
	lines := make([]string, len(d.msgs))
	for i, m := range d.msgs {
		lines[i] = m
		if d.counts[i] > 1 {
			lines[i] = fmt.Sprintf("%s (%d times)", m, d.counts[i])
		}
	}
	return strings.Join(lines, "\n")
}

func (d *distinct) Unwrap() []error { return d.all }
