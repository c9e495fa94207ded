package campaign

import (
	"fmt"
	"slices"

	"github.com/linerate/linerate/internal/enum"
)

// Shortfall is what a trial whose senders did not reach the offered rate
// is, as a campaign spec's shortfall gives it.
type Shortfall string

// Shortfalls a campaign can be given.
const (
	// ShortfallInvalid, the default: the generator's limit, never the
	// device's loss.
	ShortfallInvalid Shortfall = "invalid"
	// ShortfallFail: the path pushed back (a socket sender behind a
	// shaped link is slowed, not dropped), so the trial fails.
	ShortfallFail Shortfall = "fail"
)

// Shortfalls lists every valid shortfall, the default first: the one
// list every validator and error says.
var Shortfalls = []Shortfall{ShortfallInvalid, ShortfallFail}

// Check is nil when s is one of Shortfalls; otherwise it names s and the
// valid values with what each means, for the caller to prefix with its
// field.
func (s Shortfall) Check() error {
	if slices.Contains(Shortfalls, s) {
		return nil
	}
	return fmt.Errorf("%q: valid values are %s", s, enum.And(enum.Explain(Shortfalls, Shortfall.Meaning)))
}

// Meaning is what a trial short of its offered rate is under s, for
// errors and help texts.
func (s Shortfall) Meaning() string {
	switch s {
	case ShortfallInvalid:
		return "a generator-limited trial proves nothing"
	case ShortfallFail:
		return "the path pushed back"
	}
	return ""
}
