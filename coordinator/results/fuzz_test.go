package results_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/linerate/linerate/coordinator/results"
	"github.com/linerate/linerate/coordinator/results/resultstest"
)

// FuzzDecode checks that any input is refused or decoded without a panic,
// and that a decoded document encodes and decodes to the same JSON.
func FuzzDecode(f *testing.F) {
	for _, d := range []*results.Document{resultstest.Campaign(), resultstest.Run()} {
		var buf bytes.Buffer
		if err := results.Encode(&buf, d); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Add([]byte(`{"schema": "linerate.result/v2"}`))
	f.Add([]byte(`{"schema": "linerate.result/v1.7", "summary": null, "trials": [{}]}`))
	f.Add([]byte(`{"schema": "linerate.result/v01x"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := results.Decode(bytes.NewReader(data))
		if err != nil {
			return
		}
		if err := results.CheckSchema(d.Schema); err != nil {
			t.Fatalf("decoded a document of schema %q: %v", d.Schema, err)
		}
		var once, twice bytes.Buffer
		if err := results.Encode(&once, d); err != nil {
			return // e.g. a spec that is not valid JSON on its own
		}
		d2, err := results.Decode(bytes.NewReader(once.Bytes()))
		if err != nil {
			t.Fatalf("re-decode: %v\n%s", err, once.Bytes())
		}
		if err := results.Encode(&twice, d2); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(once.Bytes(), twice.Bytes()) {
			t.Fatalf("round trip changed the document:\n%s\n%s", once.Bytes(), twice.Bytes())
		}
		_ = results.Compare(d, d2, 0) // must not panic on odd documents
		_ = d.Rows()
		_, _ = json.Marshal(results.EntryOf(d, "x.json"))
	})
}
