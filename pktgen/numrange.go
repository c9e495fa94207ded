package pktgen

import (
	"strconv"
	"strings"
)

// ParseRange reads one of pktgen's ranges as a flag or a spec gives it:
// "A" (A to A) or "A-B", each a whole number, with spaces around either
// allowed. It checks the form only (ok false: not that form); what the
// numbers may be is the caller's check, which names the input (a port
// range and a queue range have different bounds).
func ParseRange(s string) (lo, hi int, ok bool) {
	a, b, isRange := strings.Cut(strings.TrimSpace(s), "-")
	lo, err1 := strconv.Atoi(strings.TrimSpace(a))
	hi, err2 := lo, error(nil)
	if isRange {
		hi, err2 = strconv.Atoi(strings.TrimSpace(b))
	}
	return lo, hi, err1 == nil && err2 == nil
}
