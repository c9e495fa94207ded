//go:build linux && traffic

package vmtest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCaptureDoctorFixture boots the VM lab's guest (the pinned Debian
// cloud kernel, virtio_net with 4 queue pairs behind a PCI expander bridge
// on NUMA node 1, 4 CPUs, 2 on each node) with pktgen loaded and the kernel package's own
// /boot/config-REL, and captures there doctor's fixture of eth0 (doctor's
// TestCaptureFixture: what `linerate irq snapshot` records). It writes the
// tree to LINERATE_CAPTURE_OUT and runs only when that is set:
//
//	LINERATE_CAPTURE_OUT=/tmp/vm-debian.tree \
//	  go test -tags traffic -run '^TestCaptureDoctorFixture$' ./cmd/linerate/internal/vmtest
func TestCaptureDoctorFixture(t *testing.T) {
	out := os.Getenv("LINERATE_CAPTURE_OUT")
	if out == "" {
		t.Skip("captures doctor's VM fixture only when LINERATE_CAPTURE_OUT names the file to write")
	}
	if os.Geteuid() != 0 {
		t.Skip("vmtest: needs root to create the multiqueue tap device the guest's virtio NIC attaches to")
	}
	k := SkipUnlessAvailable(t)
	g := &Guest{
		Kernel:  k,
		Modules: []string{"virtio_pci", "virtio_net", "pktgen"},
		Files: map[string]string{
			"/bin/doctor.test":          BuildTestBinary(t, "github.com/linerate/linerate/doctor"),
			"/boot/config-" + k.Release: filepath.Join(filepath.Dir(k.Vmlinuz), "config-"+k.Release),
		},
		CPUs:     4,
		Memory:   "1G",
		QEMUArgs: numaNICArgs(tapDevice(t)),
		Script: `ip link set eth0 up 2>/dev/null || true
LINERATE_CAPTURE_IFACE=eth0 LINERATE_CAPTURE_OUT=- /bin/doctor.test -test.v -test.count=1 -test.run '^TestCaptureFixture$'
`,
		Log: TestLogger(t),
	}
	res, err := g.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("capture failed in the guest (exit %d); console:\n%s", res.ExitCode, res.Console)
	}
	_, tree, ok := strings.Cut(res.Output, "@@capture-begin@@\n")
	tree, _, ok2 := strings.Cut(tree, "@@capture-end@@\n")
	if !ok || !ok2 {
		t.Fatalf("no capture in the guest's output:\n%s", res.Output)
	}
	t.Logf("guest output:\n%s", res.Output)
	if err := os.WriteFile(out, []byte(tree), 0o644); err != nil {
		t.Fatal(err)
	}
}
