package doctor

import (
	"fmt"
	"slices"
	"strings"

	"github.com/linerate/linerate/internal/enum"
)

// KnownCheck is a check whose WARN a host's operator accepts as known,
// with why: a host that is what it is on purpose (a lab's guest whose
// virtual NIC has no line speed, whose clock no daemon disciplines
// because the run measures its offset). Its WARN is then a KNOWN: shown,
// with its evidence and Why, and no warning of a run. A FAIL is never
// accepted.
type KnownCheck struct {
	// ID is the check's id, one of IDs().
	ID string `json:"id"`
	// Why the WARN is known and needs no action, for the report.
	Why string `json:"why"`
}

// ParseKnownCheck parses "ID=WHY" (the agent's --known-check).
func ParseKnownCheck(s string) (KnownCheck, error) {
	id, why, ok := strings.Cut(s, "=")
	k := KnownCheck{ID: strings.TrimSpace(id), Why: strings.TrimSpace(why)}
	if !ok {
		return k, fmt.Errorf("%q: want CHECK=WHY, CHECK one of %s and WHY why its WARN is known on this host", s, enum.Or(IDs()))
	}
	return k, k.Check()
}

// Check is nil when k names a check and says why.
func (k KnownCheck) Check() error {
	if !slices.Contains(IDs(), k.ID) {
		return fmt.Errorf("%q: no such check: valid checks are %s", k.ID, enum.Or(IDs()))
	}
	if k.Why == "" {
		return fmt.Errorf("%s: no reason: say why its WARN is known on this host (CHECK=WHY)", k.ID)
	}
	return nil
}

// knownPrefix begins the item of evidence a KNOWN ends with: why.
const knownPrefix = "known to this host's operator (--known-check): "

// KnownWhy is why c is a KNOWN, as its host's operator said it ("" when
// c is not one): a report shows it where a WARN shows its fix.
func KnownWhy(c Check) string {
	if c.Status != Known || len(c.Evidence) == 0 {
		return ""
	}
	why, _ := strings.CutPrefix(c.Evidence[len(c.Evidence)-1], knownPrefix)
	return why
}

// accept makes c, a WARN of a check in known, a KNOWN whose last item
// of evidence says why; any other verdict is left as it is.
func accept(c *Check, known []KnownCheck) {
	if c.Status != Warn {
		return
	}
	i := slices.IndexFunc(known, func(k KnownCheck) bool { return k.ID == c.ID })
	if i < 0 {
		return
	}
	c.Status = Known
	c.Evidence = append(c.Evidence, knownPrefix+known[i].Why)
}
