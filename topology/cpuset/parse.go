package cpuset

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

var (
	// ErrSyntax is wrapped by every error about malformed list or mask input.
	ErrSyntax = errors.New("cpuset: invalid syntax")
	// ErrRange is wrapped by errors about a CPU at or above the CPU count
	// (or the supported maximum of 65536 CPUs).
	ErrRange = errors.New("cpuset: cpu out of range")
)

const (
	listExamples = `"0", "0-3,8-11", "0-15:2/4", "N", "all"`
	maskExamples = `"f", "ff,ffffffff", "1,00000000", "0xff"`
)

// parseError names the input, what is wrong with it and what would be valid,
// and unwraps to ErrSyntax or ErrRange.
type parseError struct {
	kind   string // "list" or "mask"
	input  string
	detail string
	valid  string
	err    error
}

func (e *parseError) Error() string {
	return fmt.Sprintf("parse cpu %s %q: %s (valid: %s)", e.kind, e.input, e.detail, e.valid)
}

func (e *parseError) Unwrap() error { return e.err }

// trimInput drops trailing whitespace such as the newline that ends sysfs
// and procfs files. Leading whitespace is left in place and rejected.
func trimInput(s string) string { return strings.TrimRight(s, " \t\r\n") }

// MustParseList is ParseList with an unknown CPU count; it panics on error.
// It is meant for tests and package-level variables.
func MustParseList(s string) Set {
	set, err := ParseList(s, 0)
	if err != nil {
		panic(err)
	}
	return set
}

// ParseList parses the kernel's CPU list syntax as accepted by
// bitmap_parselist: comma-separated items, each "n", "a-b" or
// "a-b:used/group" (from each block of group CPUs starting at a, take the
// first used). "N" stands for the last CPU and "all" for "0-N"; both need
// nrCPUs > 0. If nrCPUs > 0, CPUs >= nrCPUs are an ErrRange error.
// Trailing whitespace (a newline) is ignored; an empty list is the empty set.
func ParseList(s string, nrCPUs int) (Set, error) {
	p := listParser{input: s, nr: max(nrCPUs, 0)}
	body := trimInput(s)
	if body == "" {
		return Set{}, nil
	}
	var w []uint64
	for item := range strings.SplitSeq(body, ",") {
		start, end, used, group, err := p.item(item)
		if err != nil {
			return Set{}, err
		}
		for c := start; c <= end; c++ {
			if (c-start)%group < used {
				w = withCPU(w, c)
			}
		}
	}
	return fromWords(w), nil
}

type listParser struct {
	input string
	nr    int // CPU count, 0 if unknown
}

func (p *listParser) fail(err error, valid, format string, args ...any) error {
	return &parseError{kind: "list", input: p.input, detail: fmt.Sprintf(format, args...), valid: valid, err: err}
}

// item parses one comma-separated item into a range with its stride.
func (p *listParser) item(item string) (start, end, used, group int, err error) {
	if item == "" {
		return 0, 0, 0, 0, p.fail(ErrSyntax, listExamples, "empty item (stray comma)")
	}
	rng, stride, hasStride := strings.Cut(item, ":")
	if rng == "all" {
		rng = "0-N"
	}
	lo, hi, isRange := strings.Cut(rng, "-")
	if start, err = p.cpu(lo, item); err != nil {
		return 0, 0, 0, 0, err
	}
	end = start
	if isRange {
		if end, err = p.cpu(hi, item); err != nil {
			return 0, 0, 0, 0, err
		}
	}
	if start > end {
		return 0, 0, 0, 0, p.fail(ErrSyntax, listExamples, "range start %d > end %d", start, end)
	}
	used, group = 1, 1
	if hasStride {
		u, g, ok := strings.Cut(stride, "/")
		if !ok {
			return 0, 0, 0, 0, p.fail(ErrSyntax, listExamples, "item %q: stride must be \"used/group\"", item)
		}
		if used, err = p.number(u, item); err != nil {
			return 0, 0, 0, 0, err
		}
		if group, err = p.number(g, item); err != nil {
			return 0, 0, 0, 0, err
		}
		if used == 0 || used > group {
			return 0, 0, 0, 0, p.fail(ErrSyntax, listExamples, "item %q: stride needs 0 < used (%d) <= group (%d)", item, used, group)
		}
	}
	return start, end, used, group, nil
}

// cpu parses a CPU number or "N" and checks it against the CPU count.
func (p *listParser) cpu(tok, item string) (int, error) {
	if tok == "N" {
		if p.nr == 0 {
			return 0, p.fail(ErrSyntax, `explicit CPU numbers such as "0-3,8-11"`,
				"item %q: \"N\" and \"all\" need the CPU count, which is unknown", item)
		}
		return p.check(p.nr-1, item)
	}
	n, err := p.number(tok, item)
	if err != nil {
		return 0, err
	}
	return p.check(n, item)
}

// number parses a non-negative decimal of at most 9 digits.
func (p *listParser) number(tok, item string) (int, error) {
	if tok == "" || strings.Trim(tok, "0123456789") != "" {
		return 0, p.fail(ErrSyntax, listExamples, "item %q: %q is not a decimal number", item, tok)
	}
	if len(tok) > 9 {
		return 0, p.fail(ErrRange, listExamples, "item %q: number %s is too large", item, tok)
	}
	return strconv.Atoi(tok)
}

// check rejects CPUs at or above the CPU count or the supported maximum.
func (p *listParser) check(cpu int, item string) (int, error) {
	if p.nr > 0 && cpu >= p.nr {
		valid := "0"
		if p.nr > 1 {
			valid = fmt.Sprintf("0-%d", p.nr-1)
		}
		return 0, p.fail(ErrRange, valid, "item %q: cpu %d >= CPU count %d", item, cpu, p.nr)
	}
	if cpu >= maxCPUs {
		return 0, p.fail(ErrRange, fmt.Sprintf("0-%d", maxCPUs-1), "item %q: cpu %d exceeds the supported maximum", item, cpu)
	}
	return cpu, nil
}

// ParseMask parses the kernel's %*pb hex mask: comma-separated groups of 1 to
// 8 hex digits (either case), most-significant group first, each covering 32
// CPUs ("1,00000000" is CPU 32). A single group-free hex number may carry a
// "0x" prefix ("0x1ff"). Trailing whitespace (a newline) is ignored.
func ParseMask(s string) (Set, error) {
	fail := func(format string, args ...any) (Set, error) {
		return Set{}, &parseError{kind: "mask", input: s, detail: fmt.Sprintf(format, args...), valid: maskExamples, err: ErrSyntax}
	}
	body := trimInput(s)
	if body == "" {
		return fail("empty mask")
	}
	const maxGroups = maxCPUs / 32
	var groups []string
	if hex, ok := strings.CutPrefix(strings.ToLower(body), "0x"); ok {
		if strings.Contains(hex, ",") {
			return fail(`"0x" prefix is only allowed without commas`)
		}
		if len(hex) > maxGroups*8 {
			return fail("mask longer than %d bits", maxCPUs)
		}
		for len(hex) > 8 { // split into 32-bit groups, least significant last
			groups = append([]string{hex[len(hex)-8:]}, groups...)
			hex = hex[:len(hex)-8]
		}
		groups = append([]string{hex}, groups...)
	} else {
		if strings.Count(body, ",") >= maxGroups {
			return fail("mask longer than %d bits", maxCPUs)
		}
		groups = strings.Split(body, ",")
	}
	w := make([]uint64, (len(groups)+1)/2)
	for i, g := range groups {
		j := len(groups) - 1 - i // group index counted from the least significant end
		if g == "" {
			return fail("empty group (stray comma)")
		}
		if len(g) > 8 {
			return fail("group %q has more than 8 hex digits", g)
		}
		var v uint64
		for k := range len(g) {
			d := hexDigit(g[k])
			if d < 0 {
				return fail("group %q is not hexadecimal", g)
			}
			v = v<<4 | uint64(d)
		}
		w[j/2] |= v << (32 * (j % 2))
	}
	return fromWords(w), nil
}

// hexDigit returns the value of hex digit c, or -1.
func hexDigit(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}
