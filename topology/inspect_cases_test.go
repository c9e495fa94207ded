package topology

import (
	"fmt"
	"strings"
	"testing"

	"github.com/linerate/linerate/topology/irqname"
)

// The cases TestInspect runs: one per fixture interface, with what
// Inspect must find there.

// wantVec is one expected queue vector, in Inspect's order.
type wantVec struct {
	queue int
	dir   irqname.Dir
	irq   int
	name  string
}

// wantSkip is one expected skipped IRQ; reason is a substring.
type wantSkip struct {
	irq          int
	name, reason string
}

func (w wantVec) String() string {
	return fmt.Sprintf("q%d %s irq %d %s", w.queue, w.dir, w.irq, w.name)
}

// queueRun numbers vectors 0..len(irqs)-1 with one direction and a name
// format taking the queue index.
func queueRun(dir irqname.Dir, irqs []int, format string) []wantVec {
	var out []wantVec
	for i, irq := range irqs {
		out = append(out, wantVec{i, dir, irq, fmt.Sprintf(format, i)})
	}
	return out
}

func irqRange(first, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = first + i
	}
	return out
}

func irqStep(first, n, step int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = first + i*step
	}
	return out
}

func noNames(irqs ...int) []wantSkip {
	var out []wantSkip
	for _, irq := range irqs {
		out = append(out, wantSkip{irq, "", "no action name"})
	}
	return out
}

// mlx5NewComp are the IRQs of mlx5_comp0..15@pci:0000:3b:00.0 in the
// mlx5-new fixture: allocated on demand, not monotonic in the index.
var mlx5NewComp = []int{99, 109, 100, 101, 102, 103, 104, 105, 106, 107, 108, 110, 111, 112, 113, 114}

type inspectCase struct {
	fixture, iface string
	driver, pci    string
	node           int
	local          string
	source         string
	rx, tx         int
	vecs           []wantVec
	skipped        []wantSkip
	warnings       []string // substrings, one per warning, in order
	check          func(t *testing.T, n *NIC)
}

var inspectCases = []inspectCase{
	{
		fixture: "virtio-eth0", iface: "eth0", driver: "virtio_net", pci: "0000:00:03.0", node: -1, local: "0-1",
		source: "msi_irqs", rx: 1, tx: 1,
		vecs:     []wantVec{{0, irqname.Rx, 38, "virtio2-input.0"}, {0, irqname.Tx, 39, "virtio2-output.0"}},
		skipped:  []wantSkip{{37, "virtio2-config", "configuration-change"}},
		warnings: []string{"0000:00:03.0 reports numa_node -1 (firmware gives no proximity): local CPUs 0-1 taken from its local_cpulist"},
		check: func(t *testing.T, n *NIC) {
			if n.VirtioDev != "virtio2" || n.DevPath != "/sys/devices/pci0000:00/0000:00:03.0" {
				t.Errorf("virtio device %q, dev path %q: want virtio2 on its PCI parent", n.VirtioDev, n.DevPath)
			}
			wantAffinity(t, n, map[int][2]string{38: {"0-1", "1"}, 39: {"0-1", "0"}})
		},
	},
	{
		fixture: "virtio-mq", iface: "eth0", driver: "virtio_net", pci: "0000:41:00.0", node: 1, local: "8-15",
		source: "msi_irqs", rx: 4, tx: 4,
		vecs: []wantVec{
			{0, irqname.Rx, 25, "virtio0-input.0"}, {0, irqname.Tx, 26, "virtio0-output.0"},
			{1, irqname.Rx, 27, "virtio0-input.1"}, {1, irqname.Tx, 28, "virtio0-output.1"},
			{2, irqname.Rx, 29, "virtio0-input.2"}, {2, irqname.Tx, 30, "virtio0-output.2"},
			{3, irqname.Rx, 31, "virtio0-input.3"}, {3, irqname.Tx, 32, "virtio0-output.3"},
		},
		skipped: []wantSkip{{24, "virtio0-config", "configuration-change"}, {33, "virtio0-control", "control virtqueue"}},
		check: func(t *testing.T, n *NIC) {
			if n.VirtioDev != "virtio0" || !strings.HasSuffix(n.DevPath, "/0000:41:00.0") {
				t.Errorf("virtio device %q, dev path %q: want virtio0 on 0000:41:00.0", n.VirtioDev, n.DevPath)
			}
			wantAffinity(t, n, map[int][2]string{25: {"0-3", "1"}, 32: {"12-15", "12"}})
		},
	},
	{
		fixture: "virtio-shared", iface: "eth0", driver: "virtio_net", pci: "0000:00:03.0", node: -1, local: "0-3",
		source: "msi_irqs", rx: 2, tx: 2,
		skipped: []wantSkip{
			{24, "virtio0-config", "configuration-change"},
			{25, "virtio0-virtqueues", "cannot pin per queue"},
		},
		warnings: []string{"numa_node -1", "no per-queue IRQs found for eth0: nothing can be pinned"},
	},
	{
		fixture: "mlx5-new", iface: "ens1f0np0", driver: "mlx5_core", pci: "0000:3b:00.0", node: 0, local: "0-7,16-23",
		source: "msi_irqs", rx: 16, tx: 16,
		vecs:    queueRun(irqname.TxRx, mlx5NewComp, "mlx5_comp%d@pci:0000:3b:00.0"),
		skipped: []wantSkip{{98, "mlx5_async0@pci:0000:3b:00.0", "async"}},
		check: func(t *testing.T, n *NIC) {
			wantAffinity(t, n, map[int][2]string{102: {"8", "8"}, 111: {"24", "24"}})
		},
	},
	{
		fixture: "mlx5-old-2port", iface: "enp129s0f0", driver: "mlx5_core", pci: "0000:81:00.0", node: 1, local: "4-7,12-15",
		source: "msi_irqs", rx: 16, tx: 16,
		vecs: queueRun(irqname.TxRx, irqStep(126, 16, 2), "mlx5_comp%d@pci:0000:81:00.0"),
		skipped: []wantSkip{
			{120, "mlx5_pages_eq@pci:0000:81:00.0", "pages"},
			{121, "mlx5_cmd_eq@pci:0000:81:00.0", "command"},
			{122, "mlx5_async_eq@pci:0000:81:00.0", "async"},
		},
		check: func(t *testing.T, n *NIC) {
			// 3.10: no effective_affinity_list.
			wantAffinity(t, n, map[int][2]string{126: {"4", ""}, 128: {"7", ""}, 156: {"13", ""}})
		},
	},
	{
		fixture: "mlx5-old-2port", iface: "enp129s0f1", driver: "mlx5_core", pci: "0000:81:00.1", node: 1, local: "4-7,12-15",
		source: "msi_irqs", rx: 16, tx: 16,
		vecs: queueRun(irqname.TxRx, irqStep(127, 16, 2), "mlx5_comp%d@pci:0000:81:00.1"),
		skipped: []wantSkip{
			{123, "mlx5_pages_eq@pci:0000:81:00.1", "pages"},
			{124, "mlx5_cmd_eq@pci:0000:81:00.1", "command"},
			{125, "mlx5_async_eq@pci:0000:81:00.1", "async"},
		},
	},
	{
		fixture: "i40e", iface: "ens801f0", driver: "i40e", pci: "0000:86:00.0", node: 1, local: "10-19,30-39",
		source: "msi_irqs", rx: 8, tx: 8,
		vecs: queueRun(irqname.TxRx, irqRange(151, 8), "i40e-ens801f0-TxRx-%d"),
		skipped: []wantSkip{
			{150, "i40e-0000:86:00.0:misc", "misc"},
			{159, "i40e-0000:86:00.0:fdir-TxRx-0", "flow director"},
		},
		check: func(t *testing.T, n *NIC) { wantAffinity(t, n, map[int][2]string{151: {"0-39", ""}}) },
	},
	{
		fixture: "ice", iface: "ens785f0np0", driver: "ice", pci: "0000:17:00.0", node: 0, local: "0-15",
		source: "msi_irqs", rx: 9, tx: 8,
		vecs: append(queueRun(irqname.TxRx, irqRange(121, 8), "ice-ens785f0np0-TxRx-%d"),
			wantVec{8, irqname.Rx, 129, "ice-ens785f0np0-rx-8"}),
		skipped: []wantSkip{
			{120, "ice-0000:17:00.0:misc", "misc"},
			{130, "ice-0000:17:00.0:ctrl-TxRx-0", "control VSI"},
		},
	},
	{
		fixture: "ixgbe", iface: "enp1s0f0", driver: "ixgbe", pci: "0000:01:00.0", node: 0, local: "0-7",
		source: "msi_irqs", rx: 8, tx: 8,
		vecs:    queueRun(irqname.TxRx, irqRange(29, 8), "enp1s0f0-TxRx-%d"),
		skipped: []wantSkip{{37, "enp1s0f0", "link/mailbox"}},
		check:   func(t *testing.T, n *NIC) { wantAffinity(t, n, map[int][2]string{29: {"1", "1"}, 33: {"0", "0"}}) },
	},
	{
		fixture: "igb", iface: "eno1", driver: "igb", pci: "0000:03:00.0", node: 0, local: "0-3",
		source: "msi_irqs", rx: 4, tx: 4,
		vecs:    queueRun(irqname.TxRx, irqRange(41, 4), "eno1-TxRx-%d"),
		skipped: []wantSkip{{40, "eno1", "link/mailbox"}},
		check:   func(t *testing.T, n *NIC) { wantAffinity(t, n, map[int][2]string{41: {"0-3", ""}}) },
	},
	{
		fixture: "bnxt", iface: "eth0", driver: "bnxt_en", pci: "0000:41:00.0", node: 0, local: "0-5,12-17",
		source: "msi_irqs", rx: 4, tx: 4,
		vecs: []wantVec{
			{0, irqname.Rx, 60, "eth0-rx-0"}, {0, irqname.Tx, 64, "eth0-tx-4"},
			{1, irqname.Rx, 61, "eth0-rx-1"}, {1, irqname.Tx, 65, "eth0-tx-5"},
			{2, irqname.Rx, 62, "eth0-rx-2"}, {2, irqname.Tx, 66, "eth0-tx-6"},
			{3, irqname.Rx, 63, "eth0-rx-3"}, {3, irqname.Tx, 67, "eth0-tx-7"},
		},
	},
	{
		fixture: "ena", iface: "eth0", driver: "ena", pci: "0000:00:05.0", node: 0, local: "0-7",
		source: "msi_irqs", rx: 4, tx: 4,
		vecs: queueRun(irqname.TxRx, irqRange(27, 4), "eth0-Tx-Rx-%d"),
		skipped: append([]wantSkip{{26, "ena-mgmnt@pci:0000:00:05.0", "management"}},
			noNames(31, 32, 33, 34)...),
	},
	{
		fixture: "gve", iface: "ens4", driver: "gve", pci: "0000:00:04.0", node: 0, local: "0-7",
		source: "msi_irqs", rx: 4, tx: 4,
		vecs: []wantVec{
			{0, irqname.Rx, 29, "gve-ntfy-blk4@pci:0000:00:04.0"}, {0, irqname.Tx, 25, "gve-ntfy-blk0@pci:0000:00:04.0"},
			{1, irqname.Rx, 30, "gve-ntfy-blk5@pci:0000:00:04.0"}, {1, irqname.Tx, 26, "gve-ntfy-blk1@pci:0000:00:04.0"},
			{2, irqname.Rx, 31, "gve-ntfy-blk6@pci:0000:00:04.0"}, {2, irqname.Tx, 27, "gve-ntfy-blk2@pci:0000:00:04.0"},
			{3, irqname.Rx, 32, "gve-ntfy-blk7@pci:0000:00:04.0"}, {3, irqname.Tx, 28, "gve-ntfy-blk3@pci:0000:00:04.0"},
		},
		skipped: []wantSkip{{33, "gve-mgmnt@pci:0000:00:04.0", "management"}},
	},
	{
		fixture: "hns3", iface: "enp125s0f0", driver: "hns3", pci: "0000:7d:00.0", node: 0, local: "0-23",
		source: "msi_irqs", rx: 4, tx: 4,
		vecs: []wantVec{
			{0, irqname.TxRx, 41, "hns3-0000:7d:00.0-TxRx-0"}, {1, irqname.TxRx, 42, "hns3-0000:7d:00.0-TxRx-2"},
			{2, irqname.TxRx, 43, "hns3-0000:7d:00.0-TxRx-4"}, {3, irqname.TxRx, 44, "hns3-0000:7d:00.0-TxRx-6"},
		},
		skipped: []wantSkip{{40, "hclge-misc-0000:7d:00.0", "misc"}},
	},
	{
		fixture: "numa-absent", iface: "enp2s0", driver: "e1000e", pci: "0000:02:00.0", node: -1, local: "0-3",
		source: "msi_irqs", rx: 1, tx: 1,
		vecs:     []wantVec{{0, irqname.Rx, 27, "enp2s0-rx-0"}, {0, irqname.Tx, 28, "enp2s0-tx-0"}},
		skipped:  []wantSkip{{29, "enp2s0", "link/mailbox"}},
		warnings: []string{"0000:02:00.0 has no numa_node (kernel without CONFIG_NUMA?): every online CPU (0-3) counts as local"},
	},
	{
		fixture: "numa-minus1", iface: "enP30832s1", driver: "mana", pci: "7870:00:00.0", node: -1, local: "0-15",
		source: "msi_irqs", rx: 16, tx: 16,
		vecs:     queueRun(irqname.TxRx, irqRange(25, 16), "mana_q%d@pci:7870:00:00.0"),
		skipped:  []wantSkip{{24, "mana_hwc@pci:7870:00:00.0", "hardware channel"}},
		warnings: []string{"7870:00:00.0 reports numa_node -1 (firmware gives no proximity): local CPUs 0-15 taken from its local_cpulist"},
	},
	{
		// The synthetic netvsc interface: no PCI address, no msi_irqs. Its
		// node's cpulist gives the local CPUs, and the VF's BDF-named
		// vectors (mana_q0@pci:7870:00:00.0) must not be claimed by name.
		fixture: "numa-minus1", iface: "eth0", driver: "hv_netvsc", pci: "", node: 0, local: "0-15",
		source: "interrupts", rx: 16, tx: 16,
		warnings: []string{"has no msi_irqs: queue IRQs found by name in /proc/interrupts", "no per-queue IRQs found for eth0"},
	},
	{
		fixture: "host128", iface: "ens5f0np0", driver: "ice", pci: "0000:b1:00.0", node: 1, local: "64-127",
		source: "msi_irqs", rx: 16, tx: 16,
		vecs:    queueRun(irqname.TxRx, irqRange(405, 16), "ice-ens5f0np0-TxRx-%d"),
		skipped: []wantSkip{{404, "ice-0000:b1:00.0:misc", "misc"}},
		check: func(t *testing.T, n *NIC) {
			if n.NrCPUs != 128 {
				t.Errorf("NrCPUs = %d, want 128", n.NrCPUs)
			}
			wantAffinity(t, n, map[int][2]string{405: {"64", "64"}})
		},
	},
	{
		fixture: "offline-cpu", iface: "enp5s0", driver: "igc", pci: "0000:05:00.0", node: 0, local: "0-1,3",
		source: "msi_irqs", rx: 4, tx: 4,
		vecs:    queueRun(irqname.TxRx, irqRange(126, 4), "enp5s0-TxRx-%d"),
		skipped: []wantSkip{{125, "enp5s0", "link/mailbox"}},
		check: func(t *testing.T, n *NIC) {
			if n.OnlineCPUs.String() != "0-1,3" || n.NrCPUs != 4 {
				t.Errorf("online %s, NrCPUs %d: want 0-1,3 and 4", n.OnlineCPUs, n.NrCPUs)
			}
			wantAffinity(t, n, map[int][2]string{126: {"0-3", "0"}})
		},
	},
	{
		fixture: "isolated", iface: "ens2f0np0", driver: "bnxt_en", pci: "0000:02:00.0", node: 0, local: "0-7",
		source: "msi_irqs", rx: 4, tx: 4,
		vecs: queueRun(irqname.TxRx, irqRange(50, 4), "ens2f0np0-TxRx-%d"),
		check: func(t *testing.T, n *NIC) {
			if n.Isolated.String() != "2-4" {
				t.Errorf("isolated = %s, want 2-4 (isolated 2-3 and nohz_full 4)", n.Isolated)
			}
		},
	},
	{
		fixture: "isolated-all", iface: "ens1f0", driver: "ixgbe", pci: "0000:81:00.0", node: 1, local: "4-7",
		source: "msi_irqs", rx: 2, tx: 2,
		vecs:    queueRun(irqname.TxRx, irqRange(90, 2), "ens1f0-TxRx-%d"),
		skipped: []wantSkip{{92, "ens1f0", "link/mailbox"}},
		check: func(t *testing.T, n *NIC) {
			if n.Isolated.String() != "4-7" {
				t.Errorf("isolated = %s, want 4-7", n.Isolated)
			}
		},
	},
	{
		fixture: "xen-no-msi", iface: "eth1", driver: "ixgbevf", pci: "0000:00:00.0", node: -1, local: "0-3",
		source: "interrupts", rx: 2, tx: 2,
		vecs:    queueRun(irqname.TxRx, irqRange(52, 2), "eth1-TxRx-%d"),
		skipped: []wantSkip{{54, "eth1", "link/mailbox"}},
		warnings: []string{"numa_node -1",
			"0000:00:00.0 has no msi_irqs: queue IRQs found by name in /proc/interrupts"},
		check: func(t *testing.T, n *NIC) { wantAffinity(t, n, map[int][2]string{52: {"1", ""}, 53: {"2", ""}}) },
	},
	{
		fixture: "xen-no-msi", iface: "eth10", driver: "ixgbevf", pci: "0000:00:01.0", node: -1, local: "0-3",
		source: "interrupts", rx: 2, tx: 2,
		vecs:     queueRun(irqname.TxRx, irqRange(55, 2), "eth10-TxRx-%d"),
		skipped:  []wantSkip{{57, "eth10", "link/mailbox"}},
		warnings: []string{"numa_node -1", "has no msi_irqs"},
	},
	{
		fixture: "xen-no-msi-4x", iface: "eth1", driver: "ixgbevf", pci: "0000:00:00.0", node: -1, local: "0-3",
		source: "interrupts", rx: 2, tx: 2,
		vecs:     queueRun(irqname.TxRx, irqRange(52, 2), "eth1-TxRx-%d"),
		skipped:  []wantSkip{{54, "eth1", "link/mailbox"}},
		warnings: []string{"numa_node -1", "has no msi_irqs"},
	},
	{
		fixture: "managed", iface: "ens3f0np0", driver: "mlx5_core", pci: "0000:5e:00.0", node: 0, local: "0-7",
		source: "msi_irqs", rx: 4, tx: 4,
		vecs:    queueRun(irqname.TxRx, irqRange(71, 4), "mlx5_comp%d@pci:0000:5e:00.0"),
		skipped: []wantSkip{{70, "mlx5_async0@pci:0000:5e:00.0", "async"}},
		check: func(t *testing.T, n *NIC) {
			for i, v := range n.Vectors {
				if !v.Managed {
					t.Errorf("irq %d: Managed = false; its smp_affinity_list is mode 0444", v.IRQ)
				}
				if want := fmt.Sprintf("%d,%d", i, i+4); v.Current != want || v.Effective != fmt.Sprint(i) {
					t.Errorf("irq %d: current %q effective %q, want %q and %d", v.IRQ, v.Current, v.Effective, want, i)
				}
			}
		},
	},
	{
		fixture: "iface-down", iface: "ens1f1", driver: "ixgbe", pci: "0000:3b:00.1", node: 0, local: "0-7",
		source: "msi_irqs", rx: 8, tx: 8,
		skipped: noNames(irqRange(69, 9)...),
		warnings: []string{"no IRQ of 0000:3b:00.1 has a handler: is ens1f1 down?",
			"no per-queue IRQs found for ens1f1: nothing can be pinned"},
	},
	{
		fixture: "iface-down", iface: "ens1f0", driver: "ixgbe", pci: "0000:3b:00.0", node: 0, local: "0-7",
		source: "msi_irqs", rx: 8, tx: 8,
		vecs:    queueRun(irqname.TxRx, irqRange(60, 8), "ens1f0-TxRx-%d"),
		skipped: []wantSkip{{68, "ens1f0", "link/mailbox"}},
	},
	{
		fixture: "virtual", iface: "eth0", driver: "virtio_net", pci: "0000:00:03.0", node: -1, local: "0-1",
		source: "msi_irqs", rx: 1, tx: 1,
		vecs:     []wantVec{{0, irqname.Rx, 28, "virtio1-input.0"}, {0, irqname.Tx, 29, "virtio1-output.0"}},
		skipped:  []wantSkip{{27, "virtio1-config", "configuration-change"}},
		warnings: []string{"numa_node -1"},
	},
}

// wantAffinity checks Current and Effective of some queue IRQs.
func wantAffinity(t *testing.T, n *NIC, want map[int][2]string) {
	t.Helper()
	for irq, w := range want {
		found := false
		for _, v := range n.Vectors {
			if v.IRQ == irq {
				found = true
				if v.Current != w[0] || v.Effective != w[1] {
					t.Errorf("irq %d: current %q effective %q, want %q and %q", irq, v.Current, v.Effective, w[0], w[1])
				}
			}
		}
		if !found {
			t.Errorf("irq %d is not a queue vector", irq)
		}
	}
}
