package doctor

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// --known-check's values: CHECK=WHY, CHECK one of the checks, WHY said;
// anything else is refused naming the value and what would be valid.
func TestParseKnownCheck(t *testing.T) {
	k, err := ParseKnownCheck(" clock = no daemon: the run measures offsets ")
	if err != nil || k != (KnownCheck{ID: "clock", Why: "no daemon: the run measures offsets"}) {
		t.Errorf("clock=…: %+v, %v", k, err)
	}
	for in, want := range map[string]string{
		"clock":        `"clock": want CHECK=WHY, CHECK one of irqbalance, `,
		"clocks=why":   `"clocks": no such check: valid checks are irqbalance, `,
		"link=":        "link: no reason: say why its WARN is known on this host",
		"=because":     `"": no such check`,
		"link=  ":      "link: no reason",
		"firewall=ok?": "",
	} {
		_, err := ParseKnownCheck(in)
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: %v, want accepted", in, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%q: %v, want an error containing %q", in, err, want)
		}
	}
	if err := (Options{Iface: "eth0", Known: []KnownCheck{{ID: "nope", Why: "x"}}}).Check(); err == nil || !strings.Contains(err.Error(), `known check "nope": no such check`) {
		t.Errorf("Options with an unknown check: %v", err)
	}
}

// A WARN of a known check is a KNOWN: its evidence as read, then why it
// is known; its fix is kept. A FAIL of a known check stays a FAIL (strict
// still refuses it), and every other check is as without --known-check.
// Only a WARN or a FAIL warns.
func TestRunKnown(t *testing.T) {
	r, dir := fixtureRoot(t, host)
	h := Host{Root: r, RootName: dir} // no adjtimex on a fixture: clock is a WARN
	plain, err := Run(context.Background(), h, Options{Iface: "eth0"})
	if err != nil {
		t.Fatal(err)
	}
	clock := plain.Find("clock")
	if clock.Status != Warn {
		t.Fatalf("clock %s on the fixture: want WARN to accept", clock.Status)
	}
	rep, err := Run(context.Background(), h, Options{Iface: "eth0", Known: []KnownCheck{{ID: "clock", Why: "the run measures offsets"}}})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range rep.Checks {
		p := plain.Checks[i]
		if c.ID != "clock" {
			if c.Status != p.Status || !slices.Equal(c.Evidence, p.Evidence) {
				t.Errorf("%s: %s %q, want as without --known-check: %s %q", c.ID, c.Status, c.Evidence, p.Status, p.Evidence)
			}
			continue
		}
		want := append(slices.Clone(p.Evidence), "known to this host's operator (--known-check): the run measures offsets")
		if c.Status != Known || !slices.Equal(c.Evidence, want) || c.Fix != p.Fix || KnownWhy(c) != "the run measures offsets" {
			t.Errorf("clock: %s %q fix %q, why %q: want KNOWN %q, fix %q, why said", c.Status, c.Evidence, c.Fix, KnownWhy(c), want, p.Fix)
		}
		if KnownWhy(p) != "" {
			t.Errorf("a WARN has a why %q", KnownWhy(p))
		}
	}
	if rep.Count(Known) != 1 || rep.Count(Warn) != plain.Count(Warn)-1 {
		t.Errorf("%d KNOWN, %d WARN; want 1 and %d", rep.Count(Known), rep.Count(Warn), plain.Count(Warn)-1)
	}

	known := []KnownCheck{{ID: "link", Why: "w"}}
	for _, s := range []Status{Pass, Fail} {
		c := Check{ID: "link", Status: s, Evidence: []string{"read"}}
		accept(&c, known)
		if c.Status != s || len(c.Evidence) != 1 {
			t.Errorf("%s of a known check became %s %q: want it as it was", s, c.Status, c.Evidence)
		}
	}
	for s, warns := range map[Status]bool{Pass: false, Known: false, Warn: true, Fail: true} {
		if s.Warns() != warns {
			t.Errorf("%s.Warns() = %v", s, !warns)
		}
	}
}

// linerate doctor's text counts and lists a KNOWN beside the WARNs.
func TestWriteTextKnown(t *testing.T) {
	r := &Report{Iface: "eth0", Role: RoleBoth, Checks: []Check{
		{ID: "clock", Title: "clock synchronisation", Status: Known, Evidence: []string{"adjtimex: synchronised false", "known to this host's operator (--known-check): lab"}},
		{ID: "mtu", Title: "MTU", Status: Pass, Evidence: []string{"1500"}},
	}}
	var b strings.Builder
	if err := WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{": 0 FAIL, 0 WARN, 1 KNOWN, 1 PASS\n", "KNOWN  clock         clock synchronisation\n", "read: known to this host's operator (--known-check): lab\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
}
