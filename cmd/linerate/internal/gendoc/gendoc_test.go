package gendoc

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"
)

func noop(*cobra.Command, []string) error { return nil }

// A page for every command that is not hidden, none for a hidden one or
// for help, each headed by its path, section and version.
func TestMan(t *testing.T) {
	root := &cobra.Command{Use: "tool", Short: "the tool"}
	a := &cobra.Command{Use: "a", Short: "does a", RunE: noop}
	a.AddCommand(&cobra.Command{Use: "deep", Short: "goes deep", RunE: noop})
	root.AddCommand(a, &cobra.Command{Use: "b", Short: "does b", RunE: noop},
		&cobra.Command{Use: "secret", Hidden: true, RunE: noop})
	root.InitDefaultHelpCmd()
	dir := filepath.Join(t.TempDir(), "man")
	if err := Man(root, dir, "v1.2.3", time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	want := []string{"tool-a-deep.1", "tool-a.1", "tool-b.1", "tool.1"}
	if !slices.Equal(got, want) {
		t.Fatalf("pages %v, want %v", got, want)
	}
	page, err := os.ReadFile(filepath.Join(dir, "tool-a-deep.1"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`.TH "TOOL-A-DEEP" "1" "Dec 2026" "tool v1.2.3" "tool manual"`, "tool-a-deep - goes deep"} {
		if !bytes.Contains(page, []byte(s)) {
			t.Errorf("tool-a-deep.1 lacks %q:\n%s", s, page)
		}
	}
}

// bytesish is a flag.Value of a type of its own, as the agent's
// --receiver-memory is.
type bytesish struct{ s string }

func (b *bytesish) String() string     { return b.s }
func (b *bytesish) Set(s string) error { b.s = s; return nil }
func (*bytesish) Type() string         { return "bytes" }

// flags is a flag set of every kind the agent's has.
func flags() *pflag.FlagSet {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	fs.String("name", "", "node name")
	fs.String("bind", ":7946", `gossip address "quoted" and a long help that is wrapped over more than one line of the file because it is long`)
	fs.Bool("insecure", false, "plaintext")
	fs.Bool("on", true, "on by default")
	fs.StringSlice("join", nil, "seeds, repeatable")
	fs.StringSlice("allow", []string{"a", "b c"}, "allowed")
	fs.Duration("shutdown-timeout", 10*time.Second, "how long")
	fs.Int("count", 3, "how many")
	fs.Var(&bytesish{"256MiB"}, "memory", "budget")
	fs.Bool("help", false, "help")
	fs.String("config", "/etc/x.yaml", "the file")
	fs.String("hidden", "", "not shown")
	_ = fs.MarkHidden("hidden")
	_ = fs.SetAnnotation("name", cobra.BashCompOneRequiredFlag, []string{"true"})
	return fs
}

// Every flag but the skipped and hidden ones is a commented key with its
// help; uncommented, the file is YAML whose every value, set into the
// flag, leaves the flag at its default.
func TestConfig(t *testing.T) {
	var b bytes.Buffer
	if err := Config(&b, ConfigHeader{Path: "/etc/x.yaml", Command: "x", Version: "v1"}, flags(), "help", "config"); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, s := range []string{"# /etc/x.yaml: the configuration of `x` (linerate v1).", "# required: node name\n#name: \"\"\n",
		"#insecure: false\n", "#on: true\n", "#join: []\n", `#allow: ["a", "b c"]` + "\n", "#shutdown-timeout: \"10s\"\n",
		"#count: 3\n", "#memory: \"256MiB\"\n", "# gossip address \"quoted\" and a long help that is wrapped over more than one\n# line of the file because it is long\n#bind: \":7946\"\n"} {
		if !strings.Contains(text, s) {
			t.Errorf("the configuration lacks %q:\n%s", s, text)
		}
	}
	for _, line := range strings.Split(text, "\n") {
		if len(line) > 80 {
			t.Errorf("line longer than 80: %q", line)
		}
		if !strings.HasPrefix(line, "#") && line != "" {
			t.Errorf("a line not commented out: %q", line)
		}
	}
	var uncommented strings.Builder
	for _, line := range strings.Split(text, "\n") {
		if k, ok := strings.CutPrefix(line, "#"); ok && !strings.HasPrefix(k, " ") {
			uncommented.WriteString(k + "\n")
		}
	}
	var doc map[string]any
	if err := yaml.Unmarshal([]byte(uncommented.String()), &doc); err != nil {
		t.Fatalf("uncommented, the configuration is not YAML: %v\n%s", err, uncommented.String())
	}
	var keys []string
	for k := range doc {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"allow", "bind", "count", "insecure", "join", "memory", "name", "on", "shutdown-timeout"}; !slices.Equal(keys, want) {
		t.Fatalf("keys %v, want %v", keys, want)
	}
	fresh := flags()
	for k, v := range doc {
		f := fresh.Lookup(k)
		if list, ok := v.([]any); ok {
			var ss []string
			for _, x := range list {
				ss = append(ss, x.(string))
			}
			if err := f.Value.(pflag.SliceValue).Replace(ss); err != nil {
				t.Fatal(err)
			}
		} else if err := f.Value.Set(fmt.Sprint(v)); err != nil {
			t.Fatalf("--%s=%v: %v", k, v, err)
		}
		if got := f.Value.String(); got != f.DefValue {
			t.Errorf("--%s from the file is %q, its default %q", k, got, f.DefValue)
		}
	}
}
