//go:build linux && traffic

package vmtest

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestPktgenRealKernel runs pktgen's TestGuest* tests in a 2-CPU guest
// with the real pktgen module: counted and timed runs over a veth pair
// (every packet counted on the peer), two devices on one thread on two
// queues (each its own stream at the peer), stop by cancel, the kernel's
// refusals (bad parameter, unknown flag, burst on veth), and probing; then
// `linerate send` end to end through the CLI, and `linerate recv`'s
// delays against a known netem delay on one clock.
func TestPktgenRealKernel(t *testing.T) {
	k := SkipUnlessAvailable(t)
	bin := BuildTestBinary(t, "github.com/linerate/linerate/pktgen")
	cli := BuildTestBinary(t, "github.com/linerate/linerate/cmd/linerate")
	g := &Guest{
		Kernel:  k,
		Modules: []string{"veth", "pktgen", "sch_netem"},
		Files:   map[string]string{"/bin/pktgen.test": bin, "/bin/linerate.test": cli},
		CPUs:    2,
		Memory:  "512M",
		Script: `export LINERATE_VMTEST_GUEST=1
rc=0
/bin/pktgen.test -test.v -test.count=1 -test.run '^TestGuest' || rc=1
/bin/linerate.test -test.v -test.count=1 -test.run '^TestGuest' || rc=1
exit $rc
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
		t.Fatalf("pktgen guest tests failed (exit %d); console:\n%s", res.ExitCode, res.Console)
	}
	for _, name := range []string{"TestGuestKernelCount", "TestGuestKernelDevicesPerThread", "TestGuestKernelDurationAndStop", "TestGuestKernelRefusals", "TestGuestSend", "TestGuestLatencyNetem"} {
		if !strings.Contains(res.Output, "--- PASS: "+name) {
			t.Errorf("%s did not pass in the guest (skipped or missing)", name)
		}
	}
}
