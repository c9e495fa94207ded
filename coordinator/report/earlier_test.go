package report_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/linerate/linerate/coordinator/report"
	"github.com/linerate/linerate/coordinator/results"
)

// Documents stored before the run's types were made one per fact (a lab
// run: a 2-to-1 fan-in that the switch dropped every 50th test packet of;
// a lab campaign of two sizes at two rates) render today byte for byte as
// the code of 743d6ca rendered them, in every format: testdata/743d6ca
// holds each document as that code stored it and its table, CSV and HTML
// as that code's `linerate report` printed them, and the JSON is the
// stored document itself. These files are references, never rewritten by
// -update. The changes since are two. The CSV's columns of issue 19 (four
// of latency, eight of RFC 2544's back-to-back test) are appended to
// every row, empty for documents without them. A flow's "not_sent" is
// named "refused" (the senders' errors: frames the kernel refused and
// the sender sent again, never frames that did not go), in the JSON and
// in the HTML's column. The references get both before the comparison.
func TestEarlierDocumentsRenderAsBefore(t *testing.T) {
	for _, name := range []string{"lab-run", "lab-campaign"} {
		stored, err := os.ReadFile(filepath.Join("testdata", "743d6ca", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		doc, err := results.Decode(bytes.NewReader(stored))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, f := range report.Formats {
			want := stored
			if f != report.FormatJSON {
				if want, err = os.ReadFile(filepath.Join("testdata", "743d6ca", name+"."+string(f))); err != nil {
					t.Fatal(err)
				}
				if f == report.FormatCSV {
					want = withLatencyColumns(want)
				}
			}
			want = withRefused(want)
			var got bytes.Buffer
			if err := report.Write(&got, f, doc); err != nil {
				t.Fatalf("%s as %s: %v", name, f, err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("%s as %s differs from 743d6ca's (-then +now):\n%s", name, f, cmp.Diff(string(want), got.String()))
			}
		}
	}
}

// withLatencyColumns is a CSV of 743d6ca with the columns of issue 19
// appended: named in the header, empty in every other row.
func withLatencyColumns(csv []byte) []byte {
	lines := bytes.SplitAfter(csv, []byte("\n"))
	var out bytes.Buffer
	for i, l := range lines {
		if len(l) == 0 {
			continue
		}
		out.Write(bytes.TrimSuffix(l, []byte("\n")))
		if i == 0 {
			out.WriteString(",latency_p50_us,latency_p99_us,latency_max_us,latency_clock")
			out.WriteString(",burst,back_to_back_frames,back_to_back_min_frames,back_to_back_max_frames,back_to_back_s,back_to_back_rate_pps,back_to_back_trials,back_to_back_lower_bound\n")
		} else {
			out.WriteString(",,,," + ",,,,,,,,\n")
		}
	}
	return out.Bytes()
}

// withRefused is a document or rendering of 743d6ca with "not_sent" named
// as it is now.
func withRefused(doc []byte) []byte {
	doc = bytes.ReplaceAll(doc, []byte(`"not_sent":`), []byte(`"refused":`))
	return bytes.ReplaceAll(doc, []byte("<th>not sent</th>"), []byte("<th>refused (sent again)</th>"))
}
