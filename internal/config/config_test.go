package config

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// portValue refuses what is not a port, as a flag of the agent's own type does: the file's
// value must meet the flag's own check.
type portValue struct{ p *int }

func (v portValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("want a port 1-65535")
	}
	*v.p = n
	return nil
}
func (v portValue) String() string { return strconv.Itoa(*v.p) }
func (portValue) Type() string     { return "port" }

type testFlags struct {
	role, tlsDir string
	join, vlans  []string
	insecure     bool
	timeout      time.Duration
	port         int
}

func newFlags() (*pflag.FlagSet, *testFlags) {
	f := &testFlags{port: 7946}
	fs := pflag.NewFlagSet("agent", pflag.ContinueOnError)
	fs.StringVar(&f.role, "role", "", "")
	fs.StringVar(&f.tlsDir, "tls-dir", "", "")
	fs.StringSliceVar(&f.join, "join", nil, "")
	fs.StringSliceVar(&f.vlans, "allow-vlan", []string{"1"}, "")
	fs.BoolVar(&f.insecure, "insecure", false, "")
	fs.DurationVar(&f.timeout, "shutdown-timeout", 10*time.Second, "")
	fs.Var(portValue{&f.port}, "port", "")
	fs.String("config", "", "")
	fs.Bool("help", false, "")
	return fs, f
}

func load(t *testing.T, fs *pflag.FlagSet, text string) ([]string, error) {
	t.Helper()
	return Load(fs, Keys(fs, nil), "/etc/linerate/agent.yaml", []byte(text))
}

func TestLoadSetsEveryKind(t *testing.T) {
	fs, f := newFlags()
	set, err := load(t, fs, `# an agent
role: sender
tls-dir: /etc/linerate/tls
join: [a:7946, "b:7946"]
allow-vlan:
  - 100
  - 200-201
insecure: true
shutdown-timeout: 3s
port: 8000
`)
	if err != nil {
		t.Fatal(err)
	}
	if f.role != "sender" || f.tlsDir != "/etc/linerate/tls" || !f.insecure || f.timeout != 3*time.Second || f.port != 8000 {
		t.Errorf("flags %+v", f)
	}
	if !slices.Equal(f.join, []string{"a:7946", "b:7946"}) || !slices.Equal(f.vlans, []string{"100", "200-201"}) {
		t.Errorf("lists: join %q, allow-vlan %q (the default 1 replaced, not added to)", f.join, f.vlans)
	}
	if want := []string{"role", "tls-dir", "join", "allow-vlan", "insecure", "shutdown-timeout", "port"}; !slices.Equal(set, want) {
		t.Errorf("set %q, want %q", set, want)
	}
	// A required flag from the file counts as given (cobra's check
	// reads Changed).
	if !fs.Lookup("role").Changed {
		t.Error("role set from the file is not Changed")
	}
}

func TestLoadListAsScalar(t *testing.T) {
	fs, f := newFlags()
	if _, err := load(t, fs, "join: a:7946\nallow-vlan: 5,6\n"); err != nil {
		t.Fatal(err)
	}
	// A scalar is one item, split at commas as the flag splits it.
	if !slices.Equal(f.join, []string{"a:7946"}) || !slices.Equal(f.vlans, []string{"5", "6"}) {
		t.Errorf("join %q, allow-vlan %q", f.join, f.vlans)
	}
}

func TestLoadEmptyListEmpties(t *testing.T) {
	fs, f := newFlags()
	if _, err := load(t, fs, "allow-vlan: []\n"); err != nil {
		t.Fatal(err)
	}
	if len(f.vlans) != 0 {
		t.Errorf("allow-vlan %q, want empty", f.vlans)
	}
}

func TestCommandLineOverridesFile(t *testing.T) {
	fs, f := newFlags()
	if err := fs.Parse([]string{"--role", "receiver", "--join", "c:1"}); err != nil {
		t.Fatal(err)
	}
	set, err := load(t, fs, "role: sender\njoin: [a:1, b:1]\ntls-dir: /x\n")
	if err != nil {
		t.Fatal(err)
	}
	if f.role != "receiver" || !slices.Equal(f.join, []string{"c:1"}) || f.tlsDir != "/x" {
		t.Errorf("role %q join %q tls-dir %q: want the command line's role and join, the file's tls-dir", f.role, f.join, f.tlsDir)
	}
	if !slices.Equal(set, []string{"tls-dir"}) {
		t.Errorf("set from the file %q, want only tls-dir", set)
	}
}

func TestLoadRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		line       int
		want       string
	}{
		{"unknown key", "role: sender\n\nrol: x\n", 3, "rol: unknown key: valid keys are the flags allow-vlan, insecure, join, port, role, shutdown-timeout, tls-dir"},
		{"reserved key", "config: /x\n", 1, "config: unknown key"},
		{"bad duration", "role: s\nshutdown-timeout: 3 seconds\n", 2, `shutdown-timeout: "3 seconds": time: unknown unit`},
		{"flag's own check", "port: 70000\n", 1, `port: "70000": want a port 1-65535`},
		{"bad bool", "insecure: yes please\n", 1, `insecure: "yes please": strconv.ParseBool`},
		{"list for one value", "role:\n  - a\n  - b\n", 2, "role: takes one string value, not a list"},
		{"mapping", "tls-dir: {a: b}\n", 1, "tls-dir: want a string value, not a mapping"},
		{"no value", "\ntls-dir:\n", 2, "tls-dir: no value"},
		{"twice", "role: a\nrole: b\n", 2, "role: given twice (first on line 1)"},
		{"nested list", "join:\n  - [a]\n", 2, "join: line 2: want a list"},
		{"not a mapping", "- role\n", 1, "want a mapping of flag names"},
		{"two documents", "role: a\n---\nrole: b\n", 2, "a second YAML document"},
		{"not yaml", "role: [a\n", 0, "not YAML"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs, _ := newFlags()
			_, err := load(t, fs, tc.text)
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("err %v, want a *config.Error", err)
			}
			if ce.Line != tc.line {
				t.Errorf("line %d, want %d (%v)", ce.Line, tc.line, err)
			}
			prefix := "/etc/linerate/agent.yaml"
			if tc.line > 0 {
				prefix += ":" + strconv.Itoa(tc.line)
			}
			if !strings.HasPrefix(err.Error(), prefix+": ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want %q… saying %q", err, prefix, tc.want)
			}
		})
	}
}

func TestLoadEmptyFile(t *testing.T) {
	for _, text := range []string{"", "# only a comment\n"} {
		fs, f := newFlags()
		if set, err := load(t, fs, text); err != nil || set != nil || f.port != 7946 {
			t.Errorf("%q: set %q err %v port %d: want nothing set", text, set, err, f.port)
		}
	}
}

func TestKeysOnly(t *testing.T) {
	fs, _ := newFlags()
	keys := Keys(fs, []string{"join", "tls-dir"})
	if !slices.Equal(keys, []string{"join", "tls-dir"}) {
		t.Errorf("keys %q", keys)
	}
	if _, err := Load(fs, keys, "c.yaml", []byte("role: x\n")); err == nil || !strings.Contains(err.Error(), "c.yaml:1: role: unknown key: valid keys are the flags join, tls-dir") {
		t.Errorf("a flag outside the keys: %v", err)
	}
}

// What Effective prints loads again onto fresh flags to the same values,
// each line saying where its value came from.
func TestPrintRoundTrip(t *testing.T) {
	fs, f := newFlags()
	if err := fs.Parse([]string{"--port", "9000"}); err != nil {
		t.Fatal(err)
	}
	cmdline := Changed(fs)
	set, err := load(t, fs, "role: sender\njoin: [a:1, 'b:1']\ninsecure: true\ntls-dir: ''\n")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Encode(&buf, "effective", Effective(fs, Keys(fs, nil), cmdline, set, "/etc/linerate/agent.yaml")); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"# effective\n",
		"role: sender # /etc/linerate/agent.yaml\n",
		"port: \"9000\" # command line\n",
		"shutdown-timeout: 10s # default\n",
		"insecure: true # /etc/linerate/agent.yaml\n",
		"allow-vlan: [\"1\"] # default\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("printed:\n%s\nwant a line %q", out, want)
		}
	}
	fs2, f2 := newFlags()
	if _, err := load(t, fs2, out); err != nil {
		t.Fatalf("printed configuration does not load: %v\n%s", err, out)
	}
	if fmt.Sprint(*f2) != fmt.Sprint(*f) {
		t.Errorf("loaded again %+v, want %+v", *f2, *f)
	}
}
