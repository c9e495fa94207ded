package results_test

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/coordinator/results"
)

// TestStoredLabTruth checks that a run document `linerate lab run` stored
// before the lab's truth was typed (at 7132701) still loads, that its "lab"
// sections (the document's and the run's) read as coordinator.PathTruth,
// and that it encodes back to the same document (its keys, their order
// aside, and values; TestDocumentJSONUnchanged) with the same "lab" bytes.
func TestStoredLabTruth(t *testing.T) {
	raw, err := os.ReadFile("testdata/lab-run-7132701.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := results.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if doc.Lab == nil || doc.Run == nil || doc.Run.Lab == nil {
		t.Fatalf("lab sections: document %v, run %v", doc.Lab, doc.Run)
	}
	for _, lab := range [][]string{portNames(doc.Lab.SwitchPorts), portNames(doc.Run.Lab.SwitchPorts)} {
		if len(lab) != 4 || lab[0] != "s1" || lab[3] != "r2" {
			t.Errorf("switch ports %v, want s1 s2 r1 r2", lab)
		}
	}
	s1, r1 := doc.Lab.SwitchPorts[0], doc.Lab.SwitchPorts[2]
	if s1.To != "switch" || s1.Loss != "pass" || s1.TestPackets == 0 || r1.To != "r1" || r1.TxPackets < s1.TestPackets || doc.Lab.Drops() != 0 {
		t.Errorf("ports s1 %+v, r1 %+v", s1, r1)
	}
	var buf bytes.Buffer
	if err := results.Encode(&buf, doc); err != nil {
		t.Fatal(err)
	}
	if diff := jsonDiff(t, renamedSince(raw), buf.Bytes()); diff != "" {
		t.Errorf("encoded again, the document differs (-stored +now):\n%s", diff)
	}
	// The "lab" object by itself, key for key.
	var before, after struct {
		Lab json.RawMessage `json:"lab"`
	}
	if err := json.Unmarshal(raw, &before); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(buf.Bytes(), &after); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before.Lab, after.Lab) {
		t.Errorf("lab:\n%s\nwas:\n%s", after.Lab, before.Lab)
	}
}

func portNames(ps []coordinator.PortTruth) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}
