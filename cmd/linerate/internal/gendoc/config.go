package gendoc

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// ConfigHeader opens a generated configuration: what the file is and how
// it is read. The keys' text follows it.
type ConfigHeader struct {
	Path    string // where the file is installed, e.g. /etc/linerate/agent.yaml
	Command string // the command that reads it, e.g. "linerate agent"
	Version string // the binary's version that wrote it
}

// Config writes the commented default configuration of a command: for
// every flag of flags (its long name is the key), the flag's help as a
// comment, "required" when cobra marks it so, and the key with its
// default as a commented YAML line — lists as sequences, booleans and
// numbers plain, everything else a quoted string — so that uncommenting
// a line changes nothing until its value is edited. Flags named in skip
// (help, the configuration's own flags) and hidden flags have no key.
func Config(w io.Writer, h ConfigHeader, flags *pflag.FlagSet, skip ...string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s: the configuration of `%s` (linerate %s).\n", h.Path, h.Command, h.Version)
	b.WriteString("# Every key is one of its flags, by the flag's long name; a flag given on\n")
	b.WriteString("# the command line overrides the key. Each key below is commented out at\n")
	b.WriteString("# its default.\n")
	flags.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || slices.Contains(skip, f.Name) {
			return
		}
		b.WriteString("\n")
		usage := f.Usage
		if req, ok := f.Annotations[cobra.BashCompOneRequiredFlag]; ok && len(req) > 0 && req[0] == "true" {
			usage = "required: " + usage
		}
		for _, line := range wrap(usage, 76) {
			b.WriteString("# " + line + "\n")
		}
		fmt.Fprintf(&b, "#%s: %s\n", f.Name, yamlValue(f))
	})
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write the configuration %s: %w", h.Path, err)
	}
	return nil
}

// yamlValue is f's default as YAML: a list for a slice flag, plain for a
// boolean or a number, else a double-quoted string (YAML's double quotes
// take Go's escapes for the printable ASCII the flags' defaults are).
func yamlValue(f *pflag.Flag) string {
	if sv, ok := f.Value.(pflag.SliceValue); ok {
		items := sv.GetSlice()
		q := make([]string, len(items))
		for i, s := range items {
			q[i] = strconv.Quote(s)
		}
		return "[" + strings.Join(q, ", ") + "]"
	}
	switch t := f.Value.Type(); {
	case t == "bool", strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"), strings.HasPrefix(t, "float"):
		return f.DefValue
	}
	return strconv.Quote(f.DefValue)
}

// wrap breaks s into lines of at most width bytes at spaces (a longer
// word is a line of its own).
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		switch {
		case line == "":
			line = w
		case len(line)+1+len(w) <= width:
			line += " " + w
		default:
			lines = append(lines, line)
			line = w
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}
