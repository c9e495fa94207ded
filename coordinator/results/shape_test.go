package results_test

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/linerate/linerate/coordinator/results"
)

// The JSON of a stored document, and with it of a run (`lab run --json`
// prints the Result a run document keeps), is a contract: every key, its
// value's type and whether it is left out when empty. Two documents pin
// it, each read and encoded again and compared, value for value, with
// what the code at 743d6ca wrote:
//
//   - testdata/document-743d6ca.json, which the code at 743d6ca encoded
//     from a document with every field set (each list of objects followed
//     by one object with every field zero, for what omitempty leaves out);
//   - testdata/lab-run-7132701.json, stored at 7132701, which the code at
//     743d6ca encoded back byte for byte.
//
// Both are compared byte for byte too: the order of keys is part of what
// the documents have always been. One key has changed since, on purpose:
// a flow's (and a direction's) "not_sent" is "refused" (renamedSince).
func TestDocumentJSONUnchanged(t *testing.T) {
	for _, path := range []string{"testdata/document-743d6ca.json", "testdata/lab-run-7132701.json"} {
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := results.Decode(bytes.NewReader(want))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		want = renamedSince(want)
		var got bytes.Buffer
		if err := results.Encode(&got, doc); err != nil {
			t.Fatal(err)
		}
		if diff := jsonDiff(t, want, got.Bytes()); diff != "" {
			t.Errorf("%s encoded again differs (-743d6ca +now):\n%s", path, diff)
		}
		if !bytes.Equal(want, got.Bytes()) {
			t.Errorf("%s encoded again is not byte for byte what it was:\n%s", path, cmp.Diff(string(want), got.String()))
		}
	}
}

// jsonDiff is how two JSON texts differ as values (keys, value types,
// values, whatever the order of keys); "" when they do not.
func jsonDiff(t *testing.T, want, got []byte) string {
	t.Helper()
	return cmp.Diff(jsonValue(t, want), jsonValue(t, got))
}

// jsonValue is the value of a JSON text, numbers as they are written.
func jsonValue(t *testing.T, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// renamedSince is a document stored at 743d6ca or before with the one key
// renamed since: "not_sent", the senders' errors, is "refused" (each such
// frame the kernel refused was sent again; the old name said it never
// went). Decode reads either.
func renamedSince(doc []byte) []byte {
	return bytes.ReplaceAll(doc, []byte(`"not_sent":`), []byte(`"refused":`))
}
