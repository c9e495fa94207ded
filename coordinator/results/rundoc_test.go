package results_test

import (
	"testing"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/coordinator/results"
)

// A run's stored document carries the tool's version, on every host too,
// and the lab's truth when the run has it.
func TestRunDocument(t *testing.T) {
	res := &coordinator.Result{RunID: "r1", Status: coordinator.StatusOK, FrameSize: 64,
		Hosts: []coordinator.Host{{Name: "s1", Role: "sender"}, {Name: "r1", Role: "receiver"}},
		Lab:   &coordinator.PathTruth{}}
	d := results.RunDocument(res, "v1.2.3")
	if d.ID != "r1" || d.Kind != results.KindRun || d.Tool != "v1.2.3" || d.Lab != res.Lab || len(d.Hosts) != 2 {
		t.Fatalf("document %+v", d)
	}
	for _, h := range d.Hosts {
		if h.Version != "v1.2.3" {
			t.Errorf("host %s: version %q", h.Name, h.Version)
		}
	}
	if d := results.RunDocument(&coordinator.Result{RunID: "r2"}, "v1"); d.Lab != nil {
		t.Errorf("a run without a lab: lab %+v", d.Lab)
	}
}
