package doctor

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/linerate/linerate/internal/fsfixture"
	"github.com/linerate/linerate/topology"
)

// TestCaptureFixture captures this host's files for the doctor's file
// checks as a fixture tree: exactly what `linerate irq snapshot` records
// (topology.RecordIface), packed as text. It runs only when asked:
//
//	LINERATE_CAPTURE_IFACE=eth0 LINERATE_CAPTURE_OUT=/tmp/host.tree go test -run '^TestCaptureFixture$' ./doctor
//
// and, with LINERATE_CAPTURE_OUT=-, prints the tree between markers on
// standard output (how a vmtest guest hands it to the host). The checks
// made on the live root are logged, to compare with the fixture's.
func TestCaptureFixture(t *testing.T) {
	iface, out := os.Getenv("LINERATE_CAPTURE_IFACE"), os.Getenv("LINERATE_CAPTURE_OUT")
	if iface == "" || out == "" {
		t.Skip("captures a fixture of this host only when LINERATE_CAPTURE_IFACE and LINERATE_CAPTURE_OUT are set")
	}
	root, err := topology.OpenRoot("/")
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	_, dir := snapshotOf(t, root, iface)
	tree, err := fsfixture.Pack(dir, os.Getenv("LINERATE_CAPTURE_COMMENT"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), Host{Root: root, RootName: "/"}, Options{Iface: iface})
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.MarshalIndent(rep, "", "  ")
	t.Logf("live checks:\n%s", js)
	if out == "-" {
		os.Stdout.WriteString("@@capture-begin@@\n")
		os.Stdout.Write(tree)
		os.Stdout.WriteString("@@capture-end@@\n")
		return
	}
	if err := os.WriteFile(out, tree, 0o644); err != nil {
		t.Fatal(err)
	}
}
