package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// subcommands are the commands `linerate PATH --help` lists under
// "Available Commands:" (cobra's help command aside): what a person sees,
// read independently of how gen walks the tree.
func subcommands(t *testing.T, path []string) []string {
	t.Helper()
	code, out, errOut := linerate(t, append(slices.Clone(path), "--help")...)
	if code != 0 {
		t.Fatalf("linerate %s --help: exit %d: %s", strings.Join(path, " "), code, errOut)
	}
	_, list, ok := strings.Cut(out, "Available Commands:\n")
	if !ok {
		return nil
	}
	var names []string
	for _, line := range strings.Split(list, "\n") {
		if !strings.HasPrefix(line, "  ") {
			break
		}
		if name := strings.Fields(line)[0]; name != "help" {
			names = append(names, name)
		}
	}
	return names
}

// helpTree is every command path below path that help lists, path's own
// first, each joined by "-" as its man page is named.
func helpTree(t *testing.T, path []string) []string {
	pages := []string{strings.Join(append([]string{"linerate"}, path...), "-") + ".1"}
	for _, sub := range subcommands(t, path) {
		pages = append(pages, helpTree(t, append(slices.Clone(path), sub))...)
	}
	return pages
}

// `linerate gen man` writes one page per command help lists, no more (the
// hidden gen has none), each a man page of its command.
func TestGenManEveryCommand(t *testing.T) {
	want := helpTree(t, nil)
	if len(want) < 40 || !slices.Contains(want, "linerate-agent-release.1") || !slices.Contains(want, "linerate-completion-bash.1") {
		t.Fatalf("the help tree is not linerate's: %v", want)
	}
	dir := filepath.Join(t.TempDir(), "man")
	if code, _, errOut := linerate(t, "gen", "man", "--dir", dir, "--date", "2026-12-05"); code != 0 {
		t.Fatalf("gen man: exit %d: %s", code, errOut)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("gen man wrote %d pages %v\nhelp lists %d commands %v", len(got), got, len(want), want)
	}
	t.Logf("%d man pages, one per command", len(got))
	page, err := os.ReadFile(filepath.Join(dir, "linerate-agent.1"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`.TH "LINERATE-AGENT" "1" "Dec 2026"`, "linerate-agent - Run the agent", `\-\-tls\-dir`, "linerate-agent-release(1)"} {
		if !strings.Contains(string(page), s) {
			t.Errorf("linerate-agent.1 lacks %q", s)
		}
	}
	if code, _, errOut := linerate(t, "gen", "man", "--dir", dir, "--date", "5 Dec"); code != 2 || !strings.Contains(errOut, `--date "5 Dec": want a date such as 2026-12-05`) {
		t.Errorf("gen man --date '5 Dec': exit %d, %q; want 2 and the date refused", code, errOut)
	}
}

// flagNames are the long flag names `linerate agent --help` lists under
// Flags (help aside).
func agentFlagNames(t *testing.T) []string {
	t.Helper()
	code, out, errOut := linerate(t, "agent", "--help")
	if code != 0 {
		t.Fatalf("agent --help: exit %d: %s", code, errOut)
	}
	_, flags, _ := strings.Cut(out, "\nFlags:\n")
	flags, _, _ = strings.Cut(flags, "\n\n")
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^\s+(?:-\w, )?--([a-z0-9-]+)`).FindAllStringSubmatch(flags, -1) {
		if m[1] != "help" && !slices.Contains(agentConfigSkip, m[1]) {
			names = append(names, m[1])
		}
	}
	return names
}

// The agent's default configuration has a commented key for every flag
// `linerate agent --help` lists, by its long name, with its default.
func TestGenAgentConfig(t *testing.T) {
	code, out, errOut := linerate(t, "gen", "agent-config")
	if code != 0 {
		t.Fatalf("gen agent-config: exit %d: %s", code, errOut)
	}
	var keys []string
	for _, m := range regexp.MustCompile(`(?m)^#([a-z0-9-]+): `).FindAllStringSubmatch(out, -1) {
		keys = append(keys, m[1])
	}
	want := agentFlagNames(t)
	slices.Sort(want)
	if len(want) < 20 || !slices.Equal(keys, want) {
		t.Fatalf("keys %v\nthe agent's flags %v", keys, want)
	}
	for _, s := range []string{"#bind: \":7946\"\n", "#join: []\n", "#shutdown-timeout: \"10s\"\n", "#insecure: false\n",
		"# required: data interface the agent owns\n#iface: \"\"\n", "#state-dir: \"/var/lib/linerate\"\n"} {
		if !strings.Contains(out, s) {
			t.Errorf("the configuration lacks %q", s)
		}
	}
}
