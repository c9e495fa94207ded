package coordinator

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPairs(t *testing.T) {
	s2, r2, r1, s1 := []string{"a", "b"}, []string{"c", "d"}, []string{"c"}, []string{"a"}
	for _, tt := range []struct {
		pattern  Pattern
		s, r     []string
		want     []Pair
		errorHas string
	}{
		{Pairwise, s2, r2, []Pair{{Sender: "a", Receiver: "c"}, {Sender: "b", Receiver: "d"}}, ""},
		{FanIn, []string{"a", "b", "e"}, r1, []Pair{{Sender: "a", Receiver: "c"}, {Sender: "b", Receiver: "c"}, {Sender: "e", Receiver: "c"}}, ""},
		{FanOut, s1, r2, []Pair{{Sender: "a", Receiver: "c"}, {Sender: "a", Receiver: "d"}}, ""},
		{Mesh, s2, r2, []Pair{{Sender: "a", Receiver: "c"}, {Sender: "a", Receiver: "d"}, {Sender: "b", Receiver: "c"}, {Sender: "b", Receiver: "d"}}, ""},
		{Pairwise, s2, r1, nil, "as many of each"},
		{FanIn, s2, r2, nil, "exactly one"},
		{FanOut, s2, r2, nil, "exactly one"},
		{"star", s2, r2, nil, "valid patterns"},
		{Mesh, nil, r2, nil, "at least one"},
		{Mesh, []string{"a", "a"}, r2, nil, "named twice"},
		{Mesh, []string{"a", "c"}, r2, nil, "both a sender and a receiver"},
	} {
		got, err := Pairs(tt.pattern, tt.s, tt.r)
		if tt.errorHas != "" {
			if err == nil || !strings.Contains(err.Error(), tt.errorHas) {
				t.Errorf("Pairs(%s, %v, %v) error %v, want %q", tt.pattern, tt.s, tt.r, err, tt.errorHas)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Pairs(%s) (-want +got):\n%s", tt.pattern, diff)
		}
	}
}
