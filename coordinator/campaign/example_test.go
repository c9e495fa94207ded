package campaign

import (
	"os"
	"testing"

	"github.com/linerate/linerate/coordinator/search"
)

// The example in the repository stays valid.
func TestExampleSpec(t *testing.T) {
	raw, err := os.ReadFile("../../examples/campaign.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Sizes) != 7 || s.Search.Type != search.TypeRFC2544 || s.Repetitions != 2 ||
		s.Latency == nil || s.Latency.Trials != 20 || s.BackToBack == nil || s.BackToBack.Trials != 50 {
		t.Errorf("example: %+v", s)
	}
}
