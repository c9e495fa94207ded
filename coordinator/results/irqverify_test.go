package results_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/linerate/linerate/coordinator/results"
	"github.com/linerate/linerate/coordinator/results/resultstest"
)

// A document stored before irq_verify decodes with no host carrying one
// (nor a reason); one with it decodes back to the same per-IRQ counts.
func TestResultsIRQVerifyCompat(t *testing.T) {
	raw, err := os.ReadFile("testdata/lab-run-7132701.json")
	if err != nil {
		t.Fatal(err)
	}
	old, err := results.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range old.Run.Hosts {
		if h.IRQVerify != nil || h.IRQVerifyReason != "" {
			t.Errorf("%s: irq_verify %+v (%q) in a document that predates it", h.Name, h.IRQVerify, h.IRQVerifyReason)
		}
	}
	doc := resultstest.Run()
	doc.Run.Hosts[0].IRQVerify.IRQs[1].Fired["9"] = 3
	doc.Run.Hosts[0].IRQVerify.IRQs[1].OffCPU, doc.Run.Hosts[0].IRQVerify.OffCPU = true, 1
	doc.Run.Hosts[1].IRQVerify, doc.Run.Hosts[1].IRQVerifyReason = nil, "no queue IRQs (virtual device)"
	var buf bytes.Buffer
	if err := results.Encode(&buf, doc); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"irq_verify": {`, `"fired": {`, `"off_cpu": 1`, `"irq_verify_reason": "no queue IRQs (virtual device)"`} {
		if !bytes.Contains(buf.Bytes(), []byte(want)) {
			t.Errorf("encoded document lacks %s", want)
		}
	}
	back, err := results.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(doc.Run.Hosts, back.Run.Hosts); diff != "" {
		t.Errorf("hosts after a round trip (-want +got):\n%s", diff)
	}
}
