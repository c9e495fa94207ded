package coordinator

import (
	"encoding/json"
	"testing"
)

// A document stored before "refused" had its name gives the same count
// under "not_sent"; one stored since gives "refused"; both decode to
// Refused, and the rest of the flow as it was.
func TestFlowReadsNotSent(t *testing.T) {
	for _, tc := range []struct{ doc string }{
		{`{"sender":"s1","sent":100,"not_sent":7}`},
		{`{"sender":"s1","sent":100,"refused":7}`},
	} {
		var f Flow
		if err := json.Unmarshal([]byte(tc.doc), &f); err != nil {
			t.Fatal(err)
		}
		if f.Refused != 7 || f.Sent != 100 || f.Sender != "s1" {
			t.Errorf("%s: %+v", tc.doc, f)
		}
		var d DirectionTotal
		if err := json.Unmarshal([]byte(tc.doc), &d); err != nil {
			t.Fatal(err)
		}
		if d.Refused != 7 || d.Sent != 100 {
			t.Errorf("%s as a direction: %+v", tc.doc, d)
		}
	}
}
