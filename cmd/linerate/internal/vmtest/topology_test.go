//go:build linux && traffic

package vmtest

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// tapDevice creates a multiqueue tap for a guest NIC and deletes it when
// the test ends, whatever happens. The tap stays down, with no address and
// no bridge: whatever the guest sends ends there.
func tapDevice(t *testing.T) string {
	t.Helper()
	ip, err := exec.LookPath("ip")
	if err != nil {
		t.Fatalf("create tap: the ip tool (iproute2) is not in PATH: %v", err)
	}
	name := fmt.Sprintf("lrvt%d", os.Getpid()) // at most 11 bytes: fits IFNAMSIZ
	if out, err := exec.Command(ip, "tuntap", "add", "dev", name, "mode", "tap", "multi_queue").CombinedOutput(); err != nil {
		t.Fatalf("create tap %s: ip tuntap add: %v: %s", name, err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		if out, err := exec.Command(ip, "link", "del", "dev", name).CombinedOutput(); err != nil {
			t.Errorf("delete tap %s: %v: %s", name, err, strings.TrimSpace(string(out)))
		}
	})
	return name
}

// numaNICArgs are the qemu arguments of a 4-CPU guest with two NUMA
// nodes (CPUs 0-1 and 2-3) whose virtio NIC, 4 queue pairs on tap, sits
// behind a PCI expander bridge on node 1.
func numaNICArgs(tap string) []string {
	return []string{
		"-object", "memory-backend-ram,id=m0,size=512M",
		"-object", "memory-backend-ram,id=m1,size=512M",
		"-numa", "node,nodeid=0,cpus=0-1,memdev=m0",
		"-numa", "node,nodeid=1,cpus=2-3,memdev=m1",
		"-device", "pxb,id=pxb1,bus_nr=0x80,numa_node=1,bus=pci.0",
		"-netdev", "tap,id=n1,ifname=" + tap + ",script=no,downscript=no,queues=4,vhost=off",
		// romfile= skips the iPXE option ROM: nothing here boots from the network.
		"-device", "virtio-net-pci,netdev=n1,bus=pxb1,mq=on,vectors=10,romfile=",
	}
}

// TestVirtioNUMA runs topology's and doctor's TestGuest* tests in a
// 4-CPU guest with two NUMA nodes (CPUs 0-1 and 2-3) whose virtio NIC, 4
// queue pairs, sits behind a PCI expander bridge on node 1. topology's:
// inspect, plan, apply to the real /proc/irq, restore. doctor's: every
// ethtool parameter read, the flow-control, coalescing and rings fixes
// where virtio_net has them, a write it refuses, and the journal restored
// to exactly the parameters read before. One boot for both: TCG is slow.
func TestVirtioNUMA(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("vmtest: needs root to create the multiqueue tap device the guest's virtio NIC attaches to")
	}
	k := SkipUnlessAvailable(t)
	bin := BuildTestBinary(t, "github.com/linerate/linerate/topology")
	doctor := BuildTestBinary(t, "github.com/linerate/linerate/doctor")
	tap := tapDevice(t)
	g := &Guest{
		Kernel:   k,
		Modules:  []string{"virtio_pci", "virtio_net"},
		Files:    map[string]string{"/bin/topology.test": bin, "/bin/doctor.test": doctor},
		CPUs:     4,
		Memory:   "1G",
		QEMUArgs: numaNICArgs(tap),
		Script: "export LINERATE_VMTEST_GUEST=1 LINERATE_VMTEST_WANT_NODE=1 LINERATE_VMTEST_WANT_CPUS=2-3 LINERATE_VMTEST_WANT_QUEUES=4\n" +
			GuestTests("/bin/topology.test", "/bin/doctor.test"),
		Timeout: 4 * time.Minute,
		Log:     TestLogger(t),
	}
	g.RunTests(t, "topology or doctor", "TestGuestVirtioNUMA", "TestGuestVirtioEthtool")
}
