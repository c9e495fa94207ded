package vm

import (
	"fmt"
	"strconv"
	"strings"
)

// Limits of a Layout.
const (
	MaxVCPUs  = 32
	MaxQueues = 16
)

// Layout is a guest's CPUs and data NIC: VCPUs split over two NUMA nodes
// (node 0 the first half, node 1 the second half), and a data NIC with
// Queues queue pairs on node 1, as a NIC sits on one socket of a
// two-socket server.
type Layout struct{ VCPUs, Queues int }

// Validate fails unless VCPUs is even and 2..MaxVCPUs and Queues is
// 1..min(VCPUs, MaxQueues); the error names the flag (--vcpus, --queues),
// what is valid and why.
func (l Layout) Validate() error {
	switch {
	case l.VCPUs < 2:
		return fmt.Errorf("--vcpus %d: want 2 to %d: each of the two NUMA nodes needs at least one CPU", l.VCPUs, MaxVCPUs)
	case l.VCPUs%2 != 0:
		return fmt.Errorf("--vcpus %d: two NUMA nodes need an even count (2, 4, ... %d)", l.VCPUs, MaxVCPUs)
	case l.VCPUs > MaxVCPUs:
		return fmt.Errorf("--vcpus %d: at most %d: more only slows every guest of one host down", l.VCPUs, MaxVCPUs)
	case l.Queues < 1:
		return fmt.Errorf("--queues %d: want 1 to %d: the data NIC needs at least one queue pair", l.Queues, min(l.VCPUs, MaxQueues))
	case l.Queues > l.VCPUs:
		return fmt.Errorf("--queues %d: at most --vcpus (%d): the guest's virtio_net uses one queue pair per online CPU, extra ones would stay idle", l.Queues, l.VCPUs)
	case l.Queues > MaxQueues:
		return fmt.Errorf("--queues %d: at most %d: node 1 has at most %d CPUs to serve them", l.Queues, MaxQueues, MaxVCPUs/2)
	}
	return nil
}

// Node0CPUs are the CPUs of NUMA node 0 (VCPUs 4: [0 1]).
func (l Layout) Node0CPUs() []int { return cpuRange(0, l.VCPUs/2) }

// Node1CPUs are the CPUs of NUMA node 1, the data NIC's (VCPUs 4: [2 3]).
func (l Layout) Node1CPUs() []int { return cpuRange(l.VCPUs/2, l.VCPUs) }

func cpuRange(from, to int) []int {
	var out []int
	for c := from; c < to; c++ {
		out = append(out, c)
	}
	return out
}

// cpuList is qemu's and the kernel's list form: "2-3", or "0" for one.
func cpuList(cpus []int) string {
	if len(cpus) == 1 {
		return strconv.Itoa(cpus[0])
	}
	return fmt.Sprintf("%d-%d", cpus[0], cpus[len(cpus)-1])
}

// memoryMiB parses qemu's -m size: a number of MiB, or with a suffix M,
// G or T; it must split into two equal nodes.
func memoryMiB(s string) (int, error) {
	num, mult := s, 1
	switch {
	case strings.HasSuffix(s, "T"):
		num, mult = strings.TrimSuffix(s, "T"), 1<<20
	case strings.HasSuffix(s, "G"):
		num, mult = strings.TrimSuffix(s, "G"), 1<<10
	case strings.HasSuffix(s, "M"):
		num = strings.TrimSuffix(s, "M")
	}
	n, err := strconv.Atoi(num)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("memory %q: want a size such as 512M or 1G", s)
	}
	mib := n * mult
	if mib < 256 || mib%2 != 0 {
		return 0, fmt.Errorf("memory %q: want at least 256M, an even number of MiB (split over two NUMA nodes)", s)
	}
	return mib, nil
}
