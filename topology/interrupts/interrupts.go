package interrupts

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// ErrParse is wrapped by every error Parse returns for malformed input.
var ErrParse = errors.New("interrupts: parse error")

// Limits that keep Parse bounded on hostile input.
const (
	maxLine = 1 << 20 // bytes per line
	maxCPUs = 8192    // header columns
)

// Table is one read of /proc/interrupts.
type Table struct {
	CPUs  []int // CPU ids from the header, in column order ("CPU0 CPU1 CPU3" -> [0 1 3]); offline CPUs are absent
	IRQs  []IRQ // numeric rows only, in file order
	Other []Row // non-numeric rows (NMI, LOC, ERR, MIS, PIN, ...)
}

// IRQ is one numeric row of /proc/interrupts.
type IRQ struct {
	Number  int
	Counts  map[int]uint64 // by CPU id (from the header), never by position
	Chip    string         // e.g. "IR-PCI-MSIX-0000:01:00.0", "PCI-MSI", "Hyper-V PCIe MSI", "GICv3", "xen-pirq-msi-x", "IO-APIC"
	HWIRQ   string         // e.g. "524288", "1", "" when the layout has none
	Trigger string         // e.g. "edge", "fasteoi", "Level", "msi-x" (the handler/flow name), "" if none found
	Actions []string       // action names, split on ", "; empty slice (not nil) when there are none
	Tail    string         // everything after the counts, spaces collapsed to single spaces, trimmed
}

// Row is a non-numeric row such as NMI or LOC. Rows like "ERR: 0" carry a
// single value, which is stored under the first header CPU.
type Row struct {
	Name   string
	Counts map[int]uint64
	Desc   string
}

// lineError describes malformed input; it unwraps to ErrParse.
type lineError struct {
	line int    // 1-based; 0 when not tied to a line
	text string // offending line, possibly shortened
	msg  string
}

func (e *lineError) Error() string {
	switch {
	case e.line == 0:
		return "parse /proc/interrupts: " + e.msg
	case e.text == "":
		return fmt.Sprintf("parse /proc/interrupts line %d: %s", e.line, e.msg)
	}
	return fmt.Sprintf("parse /proc/interrupts line %d %q: %s", e.line, e.text, e.msg)
}

func (e *lineError) Unwrap() error { return ErrParse }

func parseErr(line int, text, format string, args ...any) error {
	const maxText = 120
	if len(text) > maxText {
		text = text[:maxText] + "..."
	}
	return &lineError{line: line, text: text, msg: fmt.Sprintf(format, args...)}
}

// Parse reads a /proc/interrupts text. Malformed input yields an error
// wrapping ErrParse; read errors are returned wrapped as they are.
func Parse(r io.Reader) (*Table, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), maxLine+1)
	t := &Table{}
	seen := map[int]bool{}
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		if t.CPUs == nil {
			cpus, err := parseHeader(line)
			if err != nil {
				return nil, parseErr(n, line, "%v", err)
			}
			t.CPUs = cpus
			continue
		}
		if err := t.parseRow(line, seen); err != nil {
			return nil, parseErr(n, line, "%v", err)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, parseErr(n+1, "", "line longer than %d bytes", maxLine)
		}
		return nil, fmt.Errorf("read /proc/interrupts: %w", err)
	}
	if t.CPUs == nil {
		return nil, parseErr(0, "", "empty input")
	}
	return t, nil
}

// parseHeader parses "CPU0 CPU1 CPU3" into [0 1 3].
func parseHeader(line string) ([]int, error) {
	fields := strings.Fields(line)
	if len(fields) > maxCPUs {
		return nil, fmt.Errorf("header has %d columns, more than %d", len(fields), maxCPUs)
	}
	cpus := make([]int, 0, len(fields))
	seen := map[int]bool{}
	for _, f := range fields {
		num, ok := strings.CutPrefix(f, "CPU")
		if !ok || !isDigits(num) {
			return nil, fmt.Errorf("header column %q is not CPUn", f)
		}
		id, err := strconv.Atoi(num)
		if err != nil {
			return nil, fmt.Errorf("header column %q: CPU id out of range", f)
		}
		if seen[id] {
			return nil, fmt.Errorf("header column %q repeats CPU%d", f, id)
		}
		seen[id] = true
		cpus = append(cpus, id)
	}
	return cpus, nil // fields is non-empty: blank lines never reach here
}

// parseRow parses one "NAME: counts... tail" line into t.
func (t *Table) parseRow(line string, seen map[int]bool) error {
	name, rest, ok := strings.Cut(line, ":")
	if !ok {
		return errors.New(`missing ":"`)
	}
	name = strings.TrimSpace(name)
	if name == "" {
		return errors.New("empty row name")
	}
	fields := strings.Fields(rest)
	k := 0
	for k < len(fields) && k < len(t.CPUs) && isDigits(fields[k]) {
		k++
	}
	counts := make(map[int]uint64, k) // sized by the line, not the header
	for j, f := range fields[:k] {
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return fmt.Errorf("count %q for CPU%d is not a number: out of range", f, t.CPUs[j])
		}
		counts[t.CPUs[j]] = v
	}
	tail := fields[k:]
	if !isDigits(name) {
		t.Other = append(t.Other, Row{Name: name, Counts: counts, Desc: strings.Join(tail, " ")})
		return nil
	}
	num, err := strconv.Atoi(name)
	if err != nil {
		return fmt.Errorf("IRQ number %q out of range", name)
	}
	if seen[num] {
		return fmt.Errorf("IRQ %d repeated", num)
	}
	seen[num] = true
	irq := IRQ{Number: num, Counts: counts, Tail: strings.Join(tail, " ")}
	irq.splitTail(tail)
	t.IRQs = append(t.IRQs, irq)
	return nil
}

// bareFlows are trigger tokens that stand alone ("GICv3 25 Level").
var bareFlows = map[string]bool{
	"Level": true, "Edge": true, "level": true, "edge": true, "fasteoi": true,
	"percpu": true, "percpu_devid": true, "simple": true, "bad": true,
}

// suffixFlows end a trigger token as "-<flow>" ("524288-edge",
// "PCI-MSI-edge", "xen-pirq-msi-x"). Longer suffixes come first so that
// "ioapic-edge" wins over "edge".
var suffixFlows = []string{
	"percpu_devid", "ioapic-level", "ioapic-edge", "fasteoi", "percpu",
	"simple", "event", "msi-x", "level", "Level", "edge", "Edge", "virq",
	"bad", "msi", "ipi",
}

// splitFlow reports whether tok is a trigger token and, if so, returns the
// part before the flow suffix ("" for a bare flow) and the flow.
func splitFlow(tok string) (prefix, flow string, ok bool) {
	if bareFlows[tok] {
		return "", tok, true
	}
	for _, f := range suffixFlows {
		if p, ok := strings.CutSuffix(tok, "-"+f); ok && p != "" {
			return p, f, true
		}
	}
	if f, ok := blankHWIRQFlow(tok); ok {
		return "", f, true
	}
	return "", "", false
}

// blankHWIRQFlow recognises a trigger token printed after an empty hwirq
// column, as 4.x+ kernels do for IRQs without a domain:
// "xen-pirq    -msi-x     eth1-TxRx-0", "xen-percpu    -virq  timer0".
func blankHWIRQFlow(tok string) (string, bool) {
	f, ok := strings.CutPrefix(tok, "-")
	return f, ok && slices.Contains(suffixFlows, f)
}

// splitTail fills Chip, HWIRQ, Trigger and Actions from the tokens after
// the counts.
func (i *IRQ) splitTail(tail []string) {
	// A lone "-<flow>" wins over an earlier token that merely ends in a
	// flow name ("xen-percpu    -virq"): the chip is everything before it.
	for k, tok := range tail {
		if f, ok := blankHWIRQFlow(tok); ok {
			i.Chip, i.Trigger = strings.Join(tail[:k], " "), f
			i.Actions = splitActions(tail[k+1:])
			return
		}
	}
	for k, tok := range tail {
		prefix, flow, ok := splitFlow(tok)
		if !ok {
			continue
		}
		chip := tail[:k]
		switch {
		case isDigits(prefix): // "524288-edge"
			i.HWIRQ = prefix
		case prefix != "": // "PCI-MSI-edge", "xen-pirq-msi-x"
			chip = append(chip[:k:k], prefix)
		case k > 0 && isDigits(chip[k-1]): // "GICv3 25 Level"
			i.HWIRQ = chip[k-1]
			chip = chip[:k-1]
		}
		i.Chip = strings.Join(chip, " ")
		i.Trigger = flow
		i.Actions = splitActions(tail[k+1:])
		return
	}
	if len(tail) > 0 {
		i.Chip = tail[0]
		tail = tail[1:]
	}
	i.Actions = splitActions(tail)
}

// splitActions joins tokens with single spaces and splits the result on
// ", ", dropping empty names. The result is never nil.
func splitActions(tokens []string) []string {
	actions := []string{}
	for _, a := range strings.Split(strings.Join(tokens, " "), ", ") {
		if a = strings.TrimSpace(a); a != "" {
			actions = append(actions, a)
		}
	}
	return actions
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// ByNumber returns the IRQ with the given number.
func (t *Table) ByNumber(irq int) (IRQ, bool) {
	for _, i := range t.IRQs {
		if i.Number == irq {
			return i, true
		}
	}
	return IRQ{}, false
}

// Total returns the sum of the IRQ's counts over all CPUs.
func (i IRQ) Total() uint64 {
	var sum uint64
	for _, c := range i.Counts {
		sum += c
	}
	return sum
}

// Delta returns, for each IRQ present in both tables, per-CPU count
// increases (after - before), only CPUs with a non-zero increase. A counter
// that went down (IRQ freed and re-requested) yields the after value, as
// does a CPU missing from before. IRQs present in both tables always have
// an entry, possibly empty; IRQs present in only one are omitted.
func Delta(before, after *Table) map[int]map[int]uint64 {
	out := map[int]map[int]uint64{}
	if before == nil || after == nil {
		return out
	}
	prev := make(map[int]IRQ, len(before.IRQs))
	for _, i := range before.IRQs {
		prev[i.Number] = i
	}
	for _, a := range after.IRQs {
		b, ok := prev[a.Number]
		if !ok {
			continue
		}
		d := map[int]uint64{}
		for cpu, n := range a.Counts {
			if m := b.Counts[cpu]; n >= m {
				n -= m
			}
			if n != 0 {
				d[cpu] = n
			}
		}
		out[a.Number] = d
	}
	return out
}

// HasAction reports whether some action of the IRQ equals name exactly, or,
// when Actions could not be separated (a single action containing a
// space), whether Tail ends with name preceded by start-of-string or
// whitespace. The match is anchored: "eth1" matches neither "eth10-TxRx-0"
// nor "xeth1".
func (i IRQ) HasAction(name string) bool {
	if name == "" {
		return false
	}
	for _, a := range i.Actions {
		if a == name {
			return true
		}
	}
	if len(i.Actions) != 1 || !strings.Contains(i.Actions[0], " ") {
		return false
	}
	return i.Tail == name || strings.HasSuffix(i.Tail, " "+name)
}
