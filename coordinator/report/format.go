package report

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/linerate/linerate/coordinator/results"
	"github.com/linerate/linerate/internal/enum"
)

// Format is a report's output format, as `linerate report --format`
// gives it.
type Format string

// The output formats.
const (
	FormatHTML  Format = "html"
	FormatCSV   Format = "csv"
	FormatJSON  Format = "json"
	FormatTable Format = "table"
)

// Formats are the output formats, in the order help lists them: the one
// list Check and the help say.
var Formats = []Format{FormatHTML, FormatCSV, FormatJSON, FormatTable}

// Check is nil when f is one of Formats; otherwise it names f and the
// valid formats, for the caller to prefix with its flag.
func (f Format) Check() error {
	if slices.Contains(Formats, f) {
		return nil
	}
	return fmt.Errorf("%q: valid formats are %s", f, strings.Join(enum.Strings(Formats), ", "))
}

// FormatFromPath is the format an output file's extension implies
// (.html/.htm, .csv, .json, .txt), or "" when it implies none.
func FormatFromPath(path string) Format {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".html", ".htm":
		return FormatHTML
	case ".csv":
		return FormatCSV
	case ".json":
		return FormatJSON
	case ".txt":
		return FormatTable
	}
	return ""
}

// Write renders doc in format (one of Formats).
func Write(w io.Writer, format Format, doc *results.Document) error {
	switch format {
	case FormatHTML:
		return HTML(w, doc)
	case FormatCSV:
		return CSV(w, doc)
	case FormatJSON:
		return JSON(w, doc)
	case FormatTable:
		return Table(w, doc)
	}
	return fmt.Errorf("report format %w", format.Check())
}

// JSON writes the document itself, indented, as the store keeps it.
func JSON(w io.Writer, doc *results.Document) error { return results.Encode(w, doc) }

// formatBPS prints a bit rate with an SI prefix: 16.25 Gb/s.
func formatBPS(v float64) string { return results.FormatSI(v, "b/s") }

// formatRatio prints a loss ratio as a percentage with enough digits to
// show a single lost packet in a billion: 0, 0.0005%, 17%.
func formatRatio(r float64) string {
	if r == 0 {
		return "0"
	}
	return strconv.FormatFloat(100*r, 'g', 4, 64) + "%"
}

// formatSpeed prints a link speed: 10G, 2.5G, 100M, "?" when unknown.
func formatSpeed(mbps int64) string {
	switch {
	case mbps <= 0:
		return "?"
	case mbps >= 1000:
		return strconv.FormatFloat(float64(mbps)/1000, 'f', -1, 64) + "G"
	}
	return strconv.FormatInt(mbps, 10) + "M"
}

// receiverEngine is a receiver's counting method as the reports show it:
// "xdp (native)", "xdp (generic)", "afpacket"; "-" when unknown.
func receiverEngine(method, xdpMode string) string {
	if xdpMode != "" {
		return method + " (" + xdpMode + ")"
	}
	return orDash(method)
}

// orDash is s, or "-" when empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
