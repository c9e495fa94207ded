//go:build linux && traffic

package vmtest

import (
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
		Script:  "export LINERATE_VMTEST_GUEST=1\n" + GuestTests("/bin/pktgen.test", "/bin/linerate.test"),
		Timeout: 4 * time.Minute,
		Log:     TestLogger(t),
	}
	g.RunTests(t, "pktgen", "TestGuestKernelCount", "TestGuestKernelDevicesPerThread", "TestGuestKernelDurationAndStop", "TestGuestKernelRefusals", "TestGuestSend", "TestGuestLatencyNetem")
}
