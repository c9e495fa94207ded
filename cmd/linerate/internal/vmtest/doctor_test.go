//go:build linux && traffic

package vmtest

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// TestDoctorVirtio runs doctor's TestGuest* tests in a 2-CPU guest whose
// virtio NIC has 2 queue pairs: every ethtool parameter read, the
// flow-control, coalescing and rings fixes applied where virtio_net has
// them, a write it refuses, and the journal restored to exactly the
// parameters read before.
func TestDoctorVirtio(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("vmtest: needs root to create the multiqueue tap device the guest's virtio NIC attaches to")
	}
	k := SkipUnlessAvailable(t)
	bin := BuildTestBinary(t, "github.com/linerate/linerate/doctor")
	tap := tapDevice(t)
	g := &Guest{
		Kernel:  k,
		Modules: []string{"virtio_pci", "virtio_net"},
		Files:   map[string]string{"/bin/doctor.test": bin},
		CPUs:    2,
		Memory:  "512M",
		QEMUArgs: []string{
			"-netdev", "tap,id=n1,ifname=" + tap + ",script=no,downscript=no,queues=2,vhost=off",
			// romfile= skips the iPXE option ROM: nothing here boots from the network.
			"-device", "virtio-net-pci,netdev=n1,mq=on,vectors=6,romfile=",
		},
		Script: `export LINERATE_VMTEST_GUEST=1
/bin/doctor.test -test.v -test.count=1 -test.run '^TestGuest'
`,
		Timeout: 4 * time.Minute,
		Log:     TestLogger(t),
	}
	res, err := g.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("guest ran %s, exit %d; its output:\n%s", res.Duration.Round(time.Millisecond), res.ExitCode, res.Output)
	if res.ExitCode != 0 {
		t.Fatalf("doctor guest tests failed (exit %d); console:\n%s", res.ExitCode, res.Console)
	}
	if !strings.Contains(res.Output, "--- PASS: TestGuestVirtioEthtool") {
		t.Fatalf("TestGuestVirtioEthtool did not pass in the guest (skipped or missing); console:\n%s", res.Console)
	}
}
