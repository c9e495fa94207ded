package enum

import "testing"

type color string

func TestJoin(t *testing.T) {
	for _, tc := range []struct {
		names   []color
		and, or string
	}{
		{nil, "", ""},
		{[]color{"red"}, "red", "red"},
		{[]color{"red", "blue"}, "red and blue", "red or blue"},
		{[]color{"red", "green", "blue"}, "red, green and blue", "red, green or blue"},
	} {
		if got := And(tc.names); got != tc.and {
			t.Errorf("And(%q) = %q, want %q", tc.names, got, tc.and)
		}
		if got := Or(tc.names); got != tc.or {
			t.Errorf("Or(%q) = %q, want %q", tc.names, got, tc.or)
		}
	}
}

func TestExplain(t *testing.T) {
	meaning := func(c color) string {
		if c == "red" {
			return "stop"
		}
		return ""
	}
	if got, want := Or(Explain([]color{"red", "green"}, meaning)), "red (stop) or green"; got != want {
		t.Errorf("Or(Explain) = %q, want %q", got, want)
	}
}

func TestStrings(t *testing.T) {
	if got := Strings[color](nil); got != nil {
		t.Errorf("Strings(nil) = %#v, want nil", got)
	}
	if got := Strings([]color{"red", "blue"}); len(got) != 2 || got[0] != "red" || got[1] != "blue" {
		t.Errorf("Strings = %#v", got)
	}
}

// A usage line offers the names between bars, in the list's order.
func TestUsage(t *testing.T) {
	if got := Usage([]color{"red", "green", "blue"}); got != "red|green|blue" {
		t.Errorf("Usage = %q", got)
	}
	if got := Usage([]color(nil)); got != "" {
		t.Errorf("Usage(nil) = %q", got)
	}
}
