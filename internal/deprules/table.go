package deprules

import (
	"bufio"
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Row is one row of the package table of docs/ARCHITECTURE.md: the
// packages it is about, their floor, and what they may import.
type Row struct {
	// Line is the row's line in the document (from 1).
	Line int
	// Floor is the row's floor: a package imports only packages of its
	// own floor or below.
	Floor int
	// Packages are the row's package patterns (module-relative; "p/..."
	// is p and every package below it), as its first column names them.
	Packages []string
	// Allow is every import pattern the row's packages may import in
	// their code; AllowTest what their tests may import beyond that.
	Allow, AllowTest []string
	// MayImport is the "may import" column as written.
	MayImport string
}

// Name is how a violation names the row: its packages and its column.
func (r Row) Name() string {
	return fmt.Sprintf("the package table's row for %s (line %d) allows only: %s", strings.Join(r.Packages, ", "), r.Line, r.MayImport)
}

// tableHeader is the package table's header row.
var tableHeader = []string{"floor", "package", "its one job", "may import"}

// ParseTable reads the package table of an architecture document: the
// first table whose header is tableHeader. Every row names its packages
// in backticks in the second column; the fourth says what they may
// import: words of Words and `pattern`s, separated by commas, then
// optionally "; tests: " and what their tests may import beyond that.
// An unknown word, a row without packages or a package named twice is an
// error naming the line.
func ParseTable(doc []byte) ([]Row, error) {
	var rows []Row
	in, seen := false, map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(doc))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		cells, isRow := tableCells(line)
		switch {
		case !in && isRow && slices.Equal(cells, tableHeader):
			in = true
			continue
		case !in:
			continue
		case !isRow:
			if len(rows) == 0 {
				return nil, fmt.Errorf("line %d: the package table has no rows", n)
			}
			return rows, nil
		case strings.Trim(line, "|- :") == "":
			continue // the delimiter row
		}
		r, err := parseRow(n, cells)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		for _, p := range r.Packages {
			if at, ok := seen[p]; ok {
				return nil, fmt.Errorf("line %d: package %s is already the row of line %d", n, p, at)
			}
			seen[p] = n
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("no package table: want a table whose header is | %s |", strings.Join(tableHeader, " | "))
	}
	return rows, nil
}

// tableCells splits a Markdown table line into its trimmed cells.
func tableCells(line string) ([]string, bool) {
	if !strings.HasPrefix(line, "|") || !strings.HasSuffix(line, "|") || len(line) < 2 {
		return nil, false
	}
	cells := strings.Split(line[1:len(line)-1], "|")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells, true
}

func parseRow(n int, cells []string) (Row, error) {
	if len(cells) != len(tableHeader) {
		return Row{}, fmt.Errorf("%d cells, want %d (%s)", len(cells), len(tableHeader), strings.Join(tableHeader, ", "))
	}
	r := Row{Line: n, MayImport: cells[3]}
	floor, err := strconv.Atoi(cells[0])
	if err != nil || floor < 0 {
		return Row{}, fmt.Errorf("floor %q: want a number, 0 for the lowest", cells[0])
	}
	r.Floor = floor
	r.Packages = quoted(cells[1])
	if len(r.Packages) == 0 {
		return Row{}, fmt.Errorf("the package column %q names no `package`", cells[1])
	}
	code, tests, _ := strings.Cut(cells[3], ";")
	if r.Allow, err = imports(code); err != nil {
		return Row{}, err
	}
	if tests = strings.TrimSpace(tests); tests != "" {
		rest, ok := strings.CutPrefix(tests, "tests:")
		if !ok {
			return Row{}, fmt.Errorf("may import: %q after the ';': want \"tests: …\"", tests)
		}
		if r.AllowTest, err = imports(rest); err != nil {
			return Row{}, err
		}
	}
	return r, nil
}

// quoted are the `backticked` parts of s.
func quoted(s string) []string {
	var out []string
	for {
		_, rest, ok := strings.Cut(s, "`")
		if !ok {
			return out
		}
		q, after, ok := strings.Cut(rest, "`")
		if !ok {
			return out
		}
		out, s = append(out, q), after
	}
}

// imports reads a comma-separated list of words and `patterns`.
func imports(list string) ([]string, error) {
	var out []string
	for item := range strings.SplitSeq(list, ",") {
		item = strings.TrimSpace(item)
		switch {
		case item == "":
			return nil, fmt.Errorf("may import: an empty item in %q", list)
		case strings.HasPrefix(item, "`") && strings.HasSuffix(item, "`") && len(item) > 2:
			out = append(out, strings.Trim(item, "`"))
		default:
			pats, ok := Words[item]
			if !ok {
				return nil, fmt.Errorf("may import: %q is neither a `package` nor one of the words %s", item, strings.Join(wordList(), ", "))
			}
			out = append(out, pats...)
		}
	}
	return out, nil
}

func wordList() []string {
	var ws []string
	for w := range Words {
		ws = append(ws, w)
	}
	slices.Sort(ws)
	return ws
}
