package irqname

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Helpers building expected matches.
func q(name, family string, queue int, dir Dir) Match {
	return Match{Name: name, Kind: Queue, Family: family, Queue: queue, Dir: dir}
}

func ctl(name, family, reason string) Match {
	return Match{Name: name, Kind: Control, Family: family, Queue: -1, Reason: reason}
}

func shared(name, family, reason string) Match {
	return Match{Name: name, Kind: Shared, Family: family, Queue: -1, Reason: reason}
}

func unk(name, reason string) Match {
	return Match{Name: name, Kind: Unknown, Queue: -1, Reason: reason}
}

func withIRQ(irq int, m Match) Match {
	m.IRQ = irq
	return m
}

type nameCase struct {
	dev  Device
	name string
	want Match
}

func runNameCases(t *testing.T, cases []nameCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := MatchName(tc.dev, tc.name)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("MatchName(%+v, %q) mismatch (-want +got):\n%s", tc.dev, tc.name, diff)
			}
		})
	}
}

func TestMatchNameMLX(t *testing.T) {
	mlx5 := Device{Iface: "ens1f0np0", Driver: "mlx5_core", BDF: "0000:3b:00.0"}
	noBDF := Device{Iface: "ens1f0np0", Driver: "mlx5_core"}
	mlx4 := Device{Iface: "eth2", Driver: "mlx4_core", BDF: "0000:04:00.0"}
	runNameCases(t, []nameCase{
		{mlx5, "mlx5_comp0@pci:0000:3b:00.0", q("mlx5_comp0@pci:0000:3b:00.0", "mlx5", 0, TxRx)},
		{mlx5, "mlx5_comp17@pci:0000:3b:00.0", q("mlx5_comp17@pci:0000:3b:00.0", "mlx5", 17, TxRx)},
		{mlx5, "mlx5_async0@pci:0000:3b:00.0", ctl("mlx5_async0@pci:0000:3b:00.0", "mlx5", "mlx5 async event queue")},
		{mlx5, "mlx5_async63@pci:0000:3b:00.0", ctl("mlx5_async63@pci:0000:3b:00.0", "mlx5", "mlx5 async event queue")},
		{mlx5, "mlx5_async_eq@pci:0000:3b:00.0", ctl("mlx5_async_eq@pci:0000:3b:00.0", "mlx5", "mlx5 async event queue")},
		{mlx5, "mlx5_cmd_eq@pci:0000:3b:00.0", ctl("mlx5_cmd_eq@pci:0000:3b:00.0", "mlx5", "mlx5 command event queue")},
		{mlx5, "mlx5_pages_eq@pci:0000:3b:00.0", ctl("mlx5_pages_eq@pci:0000:3b:00.0", "mlx5", "mlx5 pages event queue")},
		{mlx5, "mlx5_combined0@pci:0000:3b:00.0", shared("mlx5_combined0@pci:0000:3b:00.0", "mlx5", reasonMlx5Comb)},
		// Second port of the same card, and a Hyper-V VF domain.
		{mlx5, "mlx5_comp0@pci:0000:3b:00.1", unk("mlx5_comp0@pci:0000:3b:00.1", "belongs to another PCI function 0000:3b:00.1")},
		{mlx5, "mlx5_async0@pci:0000:3b:00.1", unk("mlx5_async0@pci:0000:3b:00.1", "belongs to another PCI function 0000:3b:00.1")},
		{noBDF, "mlx5_comp3@pci:4ea0:00:02.0", q("mlx5_comp3@pci:4ea0:00:02.0", "mlx5", 3, TxRx)},
		{Device{Iface: "eth1", BDF: "4EA0:00:02.0"}, "mlx5_comp3@pci:4ea0:00:02.0", q("mlx5_comp3@pci:4ea0:00:02.0", "mlx5", 3, TxRx)},
		// Sub-function pools carry the parent PF's address but are not this netdev's.
		{mlx5, "mlx5_sf_comp0@pci:0000:3b:00.0", unk("mlx5_sf_comp0@pci:0000:3b:00.0", "not a queue vector of ens1f0np0")},
		{mlx5, "mlx5_comp@pci:0000:3b:00.0", unk("mlx5_comp@pci:0000:3b:00.0", "not a queue vector of ens1f0np0")},

		{mlx4, "mlx4-1@0000:04:00.0", q("mlx4-1@0000:04:00.0", "mlx4", 1, TxRx)},
		{mlx4, "mlx4-2@pci:0000:04:00.0", q("mlx4-2@pci:0000:04:00.0", "mlx4", 2, TxRx)},
		{mlx4, "mlx4-comp-5@pci:0000:04:00.0", q("mlx4-comp-5@pci:0000:04:00.0", "mlx4", 5, TxRx)},
		{mlx4, "mlx4-async@pci:0000:04:00.0", ctl("mlx4-async@pci:0000:04:00.0", "mlx4", "mlx4 async event queue")},
		{mlx4, "mlx4-comp-0@pci:0000:05:00.0", unk("mlx4-comp-0@pci:0000:05:00.0", "belongs to another PCI function 0000:05:00.0")},
	})
}

func TestMatchNameIntel(t *testing.T) {
	i40e := Device{Iface: "ens801f0", Driver: "i40e", BDF: "0000:3b:00.0"}
	eth0 := Device{Iface: "eth0", Driver: "i40e", BDF: "0000:3b:00.0"}
	ice := Device{Iface: "ens5f0", Driver: "ice", BDF: "0000:81:00.0"}
	idpf := Device{Iface: "eth1", Driver: "idpf", BDF: "0000:17:00.0"}
	mlx := Device{Iface: "eth1", Driver: "mlx5_core", BDF: "0000:17:00.0"}
	iavf := Device{Iface: "ens2f0v0", Driver: "iavf", BDF: "0000:3b:02.0"}
	runNameCases(t, []nameCase{
		{i40e, "i40e-ens801f0-TxRx-3", q("i40e-ens801f0-TxRx-3", "intel", 3, TxRx)},
		{i40e, "i40e-0000:3b:00.0:misc", ctl("i40e-0000:3b:00.0:misc", "intel", reasonMisc)},
		{i40e, "i40e-0000:3b:00.0:fdir-TxRx-0", ctl("i40e-0000:3b:00.0:fdir-TxRx-0", "intel", reasonFdir)},
		{i40e, "i40e-0000:3b:00.1:misc", unk("i40e-0000:3b:00.1:misc", "belongs to another PCI function 0000:3b:00.1")},
		{i40e, "i40e-ens801f1-TxRx-3", unk("i40e-ens801f1-TxRx-3", "not a queue vector of ens801f0")},
		{eth0, "i40e-eth0-rx-4", q("i40e-eth0-rx-4", "intel", 4, Rx)},
		{eth0, "i40e-eth0-tx-5", q("i40e-eth0-tx-5", "intel", 5, Tx)},
		{ice, "ice-ens5f0-TxRx-0", q("ice-ens5f0-TxRx-0", "intel", 0, TxRx)},
		{ice, "ice-0000:81:00.0:misc", ctl("ice-0000:81:00.0:misc", "intel", reasonMisc)},
		{ice, "ice-0000:81:00.0:ctrl-TxRx-0", ctl("ice-0000:81:00.0:ctrl-TxRx-0", "intel", "control VSI (flow director)")},
		{ice, "ice-0000:81:00.0:eswitch-TxRx-0", ctl("ice-0000:81:00.0:eswitch-TxRx-0", "intel", "control vector")},
		{ice, "ice-0000:81:00.1:ctrl-TxRx-0", unk("ice-0000:81:00.1:ctrl-TxRx-0", "belongs to another PCI function 0000:81:00.1")},
		{idpf, "idpf-eth1-TxRx-1", q("idpf-eth1-TxRx-1", "intel", 1, TxRx)},
		{idpf, "idpf-eth1-Tx-5", q("idpf-eth1-Tx-5", "intel", 5, Tx)},
		{idpf, "idpf-eth1-Rx-2", q("idpf-eth1-Rx-2", "intel", 2, Rx)},
		{idpf, "idpf-Mailbox-0", ctl("idpf-Mailbox-0", "intel", reasonMailbox)},
		{idpf, "idpf-0000:17:00.0-Mailbox-0", ctl("idpf-0000:17:00.0-Mailbox-0", "intel", reasonMailbox)},
		// A name that carries no device is claimed only for its own driver.
		{mlx, "idpf-Mailbox-0", unk("idpf-Mailbox-0", "not a queue vector of eth1")},
		{Device{Iface: "eth1"}, "idpf-Mailbox-0", unk("idpf-Mailbox-0", "not a queue vector of eth1")},
		{iavf, "iavf-ens2f0v0-TxRx-2", q("iavf-ens2f0v0-TxRx-2", "intel", 2, TxRx)},
		{iavf, "iavf-0000:3b:02.0:mbx", ctl("iavf-0000:3b:02.0:mbx", "intel", reasonMailbox)},
	})
}

// Interface names that are prefixes of each other must not match.
func TestMatchNamePrefixIfaces(t *testing.T) {
	eth1 := Device{Iface: "eth1", Driver: "ixgbe"}
	ens := Device{Iface: "ens1f0", Driver: "i40e"}
	runNameCases(t, []nameCase{
		{eth1, "eth10-TxRx-0", unk("eth10-TxRx-0", "not a queue vector of eth1")},
		{eth1, "eth10", unk("eth10", "not a queue vector of eth1")},
		{eth1, "eth1-TxRx-0", q("eth1-TxRx-0", "txrx", 0, TxRx)},
		{eth1, "i40e-eth10-TxRx-0", unk("i40e-eth10-TxRx-0", "not a queue vector of eth1")},
		{ens, "ens1f0np0-TxRx-0", unk("ens1f0np0-TxRx-0", "not a queue vector of ens1f0")},
		{ens, "i40e-ens1f0np0-TxRx-0", unk("i40e-ens1f0np0-TxRx-0", "not a queue vector of ens1f0")},
		{ens, "ens1f0np0", unk("ens1f0np0", "not a queue vector of ens1f0")},
		{ens, "ens1f0-0", q("ens1f0-0", "sfc", 0, TxRx)},
		// Regex metacharacters in the name are literal.
		{Device{Iface: "e.h0"}, "eth0-TxRx-0", unk("eth0-TxRx-0", "not a queue vector of e.h0")},
		{Device{Iface: "e.h0"}, "e.h0-TxRx-0", q("e.h0-TxRx-0", "txrx", 0, TxRx)},
	})
}

func TestMatchNameGeneric(t *testing.T) {
	eth0 := Device{Iface: "eth0", Driver: "ixgbevf", BDF: "0000:00:04.0"}
	runNameCases(t, []nameCase{
		{eth0, "eth0-TxRx-0", q("eth0-TxRx-0", "txrx", 0, TxRx)},
		{eth0, "eth0-TxRx-15", q("eth0-TxRx-15", "txrx", 15, TxRx)},
		{eth0, "eth0-rx-2", q("eth0-rx-2", "split", 2, Rx)},
		{eth0, "eth0-tx-7", q("eth0-tx-7", "split", 7, Tx)},
		{eth0, "eth0-Rx-1", q("eth0-Rx-1", "split", 1, Rx)},
		{eth0, "eth0", ctl("eth0", "txrx", reasonLink)},
		{eth0, "eth0-lsc", ctl("eth0-lsc", "txrx", "link state change vector")},
		{eth0, "eth0-TxRx-", unk("eth0-TxRx-", "not a queue vector of eth0")},
		{eth0, "eth0-TxRx-99999999999999999999", unk("eth0-TxRx-99999999999999999999", "not a queue vector of eth0")},
		{eth0, "ahci[0000:00:1f.2]", unk("ahci[0000:00:1f.2]", "not a queue vector of eth0")},
		{eth0, "", unk("", reasonNoName)},
	})
}

func TestMatchNameCloud(t *testing.T) {
	ena := Device{Iface: "eth0", Driver: "ena", BDF: "0000:00:05.0"}
	gve := Device{Iface: "ens4", Driver: "gve", BDF: "0000:00:04.0"}
	mana := Device{Iface: "enP30832s1", Driver: "mana", BDF: "7870:00:00.0"}
	vmx := Device{Iface: "ens192", Driver: "vmxnet3", BDF: "0000:0b:00.0"}
	runNameCases(t, []nameCase{
		{ena, "eth0-Tx-Rx-0", q("eth0-Tx-Rx-0", "ena", 0, TxRx)},
		{ena, "eth0-Tx-Rx-7", q("eth0-Tx-Rx-7", "ena", 7, TxRx)},
		{ena, "ena-mgmnt@pci:0000:00:05.0", ctl("ena-mgmnt@pci:0000:00:05.0", "ena", "ena management vector")},
		{ena, "ena-mgmnt@pci:0000:00:06.0", unk("ena-mgmnt@pci:0000:00:06.0", "belongs to another PCI function 0000:00:06.0")},
		{ena, "ena-Tx-Rx-0", unk("ena-Tx-Rx-0", "not a queue vector of eth0")},

		{gve, "gve-ntfy-blk3@pci:0000:00:04.0", q("gve-ntfy-blk3@pci:0000:00:04.0", "gve", 3, TxRx)},
		{gve, "gve-mgmnt@pci:0000:00:04.0", ctl("gve-mgmnt@pci:0000:00:04.0", "gve", "gve management vector")},
		{gve, "ens4-ntfy-block.2", q("ens4-ntfy-block.2", "gve", 2, TxRx)},
		{gve, "eth%d-ntfy-block.15", q("eth%d-ntfy-block.15", "gve", 15, TxRx)},
		{gve, "eth%d-mgmnt", ctl("eth%d-mgmnt", "gve", "gve management vector")},
		{ena, "eth%d-ntfy-block.15", unk("eth%d-ntfy-block.15", "not a queue vector of eth0")},

		{mana, "mana_q3@pci:7870:00:00.0", q("mana_q3@pci:7870:00:00.0", "mana", 3, TxRx)},
		{mana, "mana_hwc@pci:7870:00:00.0", ctl("mana_hwc@pci:7870:00:00.0", "mana", "mana hardware channel")},
		{mana, "mana_intr", ctl("mana_intr", "mana", "old mana name without a queue index")},
		{mana, "mana_q0@pci:7871:00:00.0", unk("mana_q0@pci:7871:00:00.0", "belongs to another PCI function 7871:00:00.0")},

		{vmx, "ens192-rxtx-0", q("ens192-rxtx-0", "rxtx", 0, TxRx)},
		{vmx, "ens192-event-4", ctl("ens192-event-4", "rxtx", "vmxnet3 event vector")},
		{vmx, "ens192-tx-0", q("ens192-tx-0", "split", 0, Tx)},
		{Device{Iface: "enp1s0np0", Driver: "nfp"}, "enp1s0np0-exn", ctl("enp1s0np0-exn", "rxtx", "exception vector")},
	})
}

func TestMatchNameOthers(t *testing.T) {
	sfc := Device{Iface: "eth0", Driver: "sfc", BDF: "0000:01:00.0"}
	hns3 := Device{Iface: "enp125s0f0", Driver: "hns3", BDF: "0000:7d:00.0"}
	qede := Device{Iface: "eth0", Driver: "qede"}
	runNameCases(t, []nameCase{
		{sfc, "eth0-0", q("eth0-0", "sfc", 0, TxRx)},
		{sfc, "eth0-12", q("eth0-12", "sfc", 12, TxRx)},
		{sfc, "eth0-rx-0", q("eth0-rx-0", "split", 0, Rx)},
		{sfc, "eth0-tx-1", q("eth0-tx-1", "split", 1, Tx)},
		{sfc, "eth0-xdp-0", ctl("eth0-xdp-0", "sfc", "XDP transmit channel")},
		{sfc, "eth0-ptp", ctl("eth0-ptp", "sfc", "PTP channel")},

		{hns3, "hns3-0000:7d:00.0-TxRx-6", q("hns3-0000:7d:00.0-TxRx-6", "hns3", 6, TxRx)},
		{hns3, "hns3-0000:7d:00.0-Rx-1", q("hns3-0000:7d:00.0-Rx-1", "hns3", 1, Rx)},
		{hns3, "hns3-0000:7d:00.0-Tx-1", q("hns3-0000:7d:00.0-Tx-1", "hns3", 1, Tx)},
		{hns3, "hclge-misc-0000:7d:00.0", ctl("hclge-misc-0000:7d:00.0", "hns3", reasonMisc)},
		{hns3, "hns3-0000:7d:00.0-misc", ctl("hns3-0000:7d:00.0-misc", "hns3", reasonMisc)},
		{hns3, "hclge_misc", ctl("hclge_misc", "hns3", reasonMisc)},
		{hns3, "hns3-0000:7d:00.1-TxRx-0", unk("hns3-0000:7d:00.1-TxRx-0", "belongs to another PCI function 0000:7d:00.1")},
		{hns3, "enp125s0f0-TxRx-2", q("enp125s0f0-TxRx-2", "txrx", 2, TxRx)},

		{qede, "eth0-fp-3", q("eth0-fp-3", "fp", 3, TxRx)},
		{qede, "qedi-fp-3", unk("qedi-fp-3", "not a queue vector of eth0")},
	})
}

func TestMatchNameVirtio(t *testing.T) {
	v := Device{Iface: "eth0", Driver: "virtio_net", BDF: "0000:00:03.0", VirtioDev: "virtio0"}
	noVirtio := Device{Iface: "eth0", Driver: "virtio_net"}
	runNameCases(t, []nameCase{
		{v, "virtio0-input.0", q("virtio0-input.0", "virtio", 0, Rx)},
		{v, "virtio0-output.3", q("virtio0-output.3", "virtio", 3, Tx)},
		{v, "virtio0-config", ctl("virtio0-config", "virtio", "virtio configuration-change vector")},
		{v, "virtio0-control", ctl("virtio0-control", "virtio", "virtio-net control virtqueue")},
		{v, "virtio0-virtqueues", shared("virtio0-virtqueues", "virtio", reasonShared)},
		{v, "virtio1-input.0", unk("virtio1-input.0", "not a queue vector of eth0")},
		{v, "virtio10-input.0", unk("virtio10-input.0", "not a queue vector of eth0")},
		{v, "virtio0-request.0", unk("virtio0-request.0", "not a queue vector of eth0")},
		{noVirtio, "virtio0-input.0", unk("virtio0-input.0", "not a queue vector of eth0")},
		{Device{VirtioDev: "virtio2"}, "virtio3-input.0", unk("virtio3-input.0", "not a queue vector of virtio2")},
	})
}

type classifyCase struct {
	name string
	dev  Device
	in   []Vector
	want []Match
}

func runClassifyCases(t *testing.T, cases []classifyCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Classify(tc.dev, tc.in)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Classify mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func vec(irq int, names ...string) Vector { return Vector{IRQ: irq, Names: names} }

func TestClassifyMLX5Order(t *testing.T) {
	d := Device{Iface: "ens1f0np0", Driver: "mlx5_core", BDF: "0000:3b:00.0"}
	const bdf, other = "@pci:0000:3b:00.0", "@pci:0000:3b:00.1"
	runClassifyCases(t, []classifyCase{{
		name: "IRQ numbers not monotonic, second port interleaved",
		dev:  d,
		in: []Vector{
			vec(109, "mlx5_comp1"+bdf),
			vec(120, "mlx5_comp0"+other),
			vec(100, "mlx5_comp2"+bdf),
			vec(98, "mlx5_async0"+bdf),
			vec(99, "mlx5_comp0"+bdf),
			vec(101, "mlx5_comp3"+bdf),
			vec(97),
		},
		want: []Match{
			withIRQ(99, q("mlx5_comp0"+bdf, "mlx5", 0, TxRx)),
			withIRQ(109, q("mlx5_comp1"+bdf, "mlx5", 1, TxRx)),
			withIRQ(100, q("mlx5_comp2"+bdf, "mlx5", 2, TxRx)),
			withIRQ(101, q("mlx5_comp3"+bdf, "mlx5", 3, TxRx)),
			withIRQ(97, unk("", reasonNoName)),
			withIRQ(98, ctl("mlx5_async0"+bdf, "mlx5", "mlx5 async event queue")),
			withIRQ(120, unk("mlx5_comp0"+other, "belongs to another PCI function 0000:3b:00.1")),
		},
	}, {
		name: "old EQ names",
		dev:  d,
		in: []Vector{
			vec(40, "mlx5_pages_eq"+bdf),
			vec(41, "mlx5_cmd_eq"+bdf),
			vec(42, "mlx5_async_eq"+bdf),
			vec(43, "mlx5_comp0"+bdf),
			vec(44, "mlx5_comp1"+bdf),
		},
		want: []Match{
			withIRQ(43, q("mlx5_comp0"+bdf, "mlx5", 0, TxRx)),
			withIRQ(44, q("mlx5_comp1"+bdf, "mlx5", 1, TxRx)),
			withIRQ(40, ctl("mlx5_pages_eq"+bdf, "mlx5", "mlx5 pages event queue")),
			withIRQ(41, ctl("mlx5_cmd_eq"+bdf, "mlx5", "mlx5 command event queue")),
			withIRQ(42, ctl("mlx5_async_eq"+bdf, "mlx5", "mlx5 async event queue")),
		},
	}, {
		name: "comp numbered from 1 (dynamic MSI-X kernels)",
		dev:  d,
		in: []Vector{
			vec(60, "mlx5_async63"+bdf),
			vec(61, "mlx5_comp1"+bdf),
			vec(62, "mlx5_comp2"+bdf),
		},
		want: []Match{
			withIRQ(61, q("mlx5_comp1"+bdf, "mlx5", 0, TxRx)),
			withIRQ(62, q("mlx5_comp2"+bdf, "mlx5", 1, TxRx)),
			withIRQ(60, ctl("mlx5_async63"+bdf, "mlx5", "mlx5 async event queue")),
		},
	}})
}

func TestClassifyQuirks(t *testing.T) {
	bnxt := Device{Iface: "eth0", Driver: "bnxt_en", BDF: "0000:5e:00.0"}
	hns3 := Device{Iface: "enp125s0f0", Driver: "hns3", BDF: "0000:7d:00.0"}
	gve := Device{Iface: "ens4", Driver: "gve", BDF: "0000:00:04.0"}
	idpf := Device{Iface: "eth1", Driver: "idpf", BDF: "0000:17:00.0"}
	vmx := Device{Iface: "ens192", Driver: "vmxnet3", BDF: "0000:0b:00.0"}
	ixgbe := Device{Iface: "eth0", Driver: "ixgbe", BDF: "0000:02:00.0"}
	const hb = "hns3-0000:7d:00.0-"

	runClassifyCases(t, []classifyCase{{
		name: "bnxt split rings: tx numbered after rx",
		dev:  bnxt,
		in: []Vector{
			vec(50, "eth0-rx-0"), vec(51, "eth0-rx-1"), vec(52, "eth0-rx-2"), vec(53, "eth0-rx-3"),
			vec(54, "eth0-tx-4"), vec(55, "eth0-tx-5"), vec(56, "eth0-tx-6"), vec(57, "eth0-tx-7"),
		},
		want: []Match{
			withIRQ(50, q("eth0-rx-0", "split", 0, Rx)), withIRQ(54, q("eth0-tx-4", "split", 0, Tx)),
			withIRQ(51, q("eth0-rx-1", "split", 1, Rx)), withIRQ(55, q("eth0-tx-5", "split", 1, Tx)),
			withIRQ(52, q("eth0-rx-2", "split", 2, Rx)), withIRQ(56, q("eth0-tx-6", "split", 2, Tx)),
			withIRQ(53, q("eth0-rx-3", "split", 3, Rx)), withIRQ(57, q("eth0-tx-7", "split", 3, Tx)),
		},
	}, {
		name: "vmxnet3 unshared vectors: rx numbered after tx",
		dev:  vmx,
		in: []Vector{
			vec(56, "ens192-tx-0"), vec(57, "ens192-tx-1"),
			vec(58, "ens192-rx-2"), vec(59, "ens192-rx-3"),
			vec(60, "ens192-event-4"),
		},
		want: []Match{
			withIRQ(58, q("ens192-rx-2", "split", 0, Rx)), withIRQ(56, q("ens192-tx-0", "split", 0, Tx)),
			withIRQ(59, q("ens192-rx-3", "split", 1, Rx)), withIRQ(57, q("ens192-tx-1", "split", 1, Tx)),
			withIRQ(60, ctl("ens192-event-4", "rxtx", "vmxnet3 event vector")),
		},
	}, {
		name: "ixgbe: independent rx/tx counters are left alone",
		dev:  ixgbe,
		in: []Vector{
			vec(70, "eth0-TxRx-0"), vec(71, "eth0-TxRx-1"), vec(72, "eth0-tx-2"), vec(73, "eth0-tx-3"),
			vec(74, "eth0"),
		},
		want: []Match{
			withIRQ(70, q("eth0-TxRx-0", "txrx", 0, TxRx)),
			withIRQ(71, q("eth0-TxRx-1", "txrx", 1, TxRx)),
			withIRQ(72, q("eth0-tx-2", "split", 2, Tx)),
			withIRQ(73, q("eth0-tx-3", "split", 3, Tx)),
			withIRQ(74, ctl("eth0", "txrx", reasonLink)),
		},
	}, {
		name: "hns3 TxRx numbers step by two",
		dev:  hns3,
		in: []Vector{
			vec(30, "hclge-misc-0000:7d:00.0"),
			vec(34, hb+"TxRx-6"), vec(31, hb+"TxRx-0"), vec(33, hb+"TxRx-4"), vec(32, hb+"TxRx-2"),
		},
		want: []Match{
			withIRQ(31, q(hb+"TxRx-0", "hns3", 0, TxRx)),
			withIRQ(32, q(hb+"TxRx-2", "hns3", 1, TxRx)),
			withIRQ(33, q(hb+"TxRx-4", "hns3", 2, TxRx)),
			withIRQ(34, q(hb+"TxRx-6", "hns3", 3, TxRx)),
			withIRQ(30, ctl("hclge-misc-0000:7d:00.0", "hns3", reasonMisc)),
		},
	}, {
		name: "old hns3 names step by two as well",
		dev:  hns3,
		in:   []Vector{vec(31, "enp125s0f0-TxRx-0"), vec(32, "enp125s0f0-TxRx-2")},
		want: []Match{
			withIRQ(31, q("enp125s0f0-TxRx-0", "txrx", 0, TxRx)),
			withIRQ(32, q("enp125s0f0-TxRx-2", "txrx", 1, TxRx)),
		},
	}, {
		name: "gve: lower half TX, upper half RX",
		dev:  gve,
		in: []Vector{
			vec(24, "gve-ntfy-blk0@pci:0000:00:04.0"), vec(25, "gve-ntfy-blk1@pci:0000:00:04.0"),
			vec(26, "gve-ntfy-blk2@pci:0000:00:04.0"), vec(27, "gve-ntfy-blk3@pci:0000:00:04.0"),
			vec(28, "gve-ntfy-blk4@pci:0000:00:04.0"), vec(29, "gve-ntfy-blk5@pci:0000:00:04.0"),
			vec(30, "gve-ntfy-blk6@pci:0000:00:04.0"), vec(31, "gve-ntfy-blk7@pci:0000:00:04.0"),
			vec(32, "gve-mgmnt@pci:0000:00:04.0"),
		},
		want: []Match{
			withIRQ(28, q("gve-ntfy-blk4@pci:0000:00:04.0", "gve", 0, Rx)),
			withIRQ(24, q("gve-ntfy-blk0@pci:0000:00:04.0", "gve", 0, Tx)),
			withIRQ(29, q("gve-ntfy-blk5@pci:0000:00:04.0", "gve", 1, Rx)),
			withIRQ(25, q("gve-ntfy-blk1@pci:0000:00:04.0", "gve", 1, Tx)),
			withIRQ(30, q("gve-ntfy-blk6@pci:0000:00:04.0", "gve", 2, Rx)),
			withIRQ(26, q("gve-ntfy-blk2@pci:0000:00:04.0", "gve", 2, Tx)),
			withIRQ(31, q("gve-ntfy-blk7@pci:0000:00:04.0", "gve", 3, Rx)),
			withIRQ(27, q("gve-ntfy-blk3@pci:0000:00:04.0", "gve", 3, Tx)),
			withIRQ(32, ctl("gve-mgmnt@pci:0000:00:04.0", "gve", "gve management vector")),
		},
	}, {
		// From the idpf fix "use vector index for IRQ names": ethtool -L eth1 tx 1 combined 3.
		name: "idpf named by MSI-X vector index",
		dev:  idpf,
		in: []Vector{
			vec(67, "idpf-Mailbox-0"),
			vec(68, "idpf-eth1-TxRx-1"), vec(70, "idpf-eth1-TxRx-3"), vec(71, "idpf-eth1-TxRx-4"),
			vec(72, "idpf-eth1-Tx-5"),
		},
		want: []Match{
			withIRQ(68, q("idpf-eth1-TxRx-1", "intel", 0, TxRx)),
			withIRQ(70, q("idpf-eth1-TxRx-3", "intel", 1, TxRx)),
			withIRQ(71, q("idpf-eth1-TxRx-4", "intel", 2, TxRx)),
			withIRQ(72, q("idpf-eth1-Tx-5", "intel", 3, Tx)),
			withIRQ(67, ctl("idpf-Mailbox-0", "intel", reasonMailbox)),
		},
	}})
}

func TestClassifyIntelAndVirtio(t *testing.T) {
	i40e := Device{Iface: "ens801f0", Driver: "i40e", BDF: "0000:3b:00.0"}
	v := Device{Iface: "eth0", Driver: "virtio_net", BDF: "0000:00:03.0", VirtioDev: "virtio0"}
	runClassifyCases(t, []classifyCase{{
		name: "i40e with misc, fdir and unpaired rx",
		dev:  i40e,
		in: []Vector{
			vec(40, "i40e-0000:3b:00.0:misc"),
			vec(41, "i40e-ens801f0-TxRx-0"),
			vec(42, "i40e-ens801f0-TxRx-1"),
			vec(43, "i40e-ens801f0-rx-2"),
			vec(44, "i40e-0000:3b:00.0:fdir-TxRx-0"),
			vec(45, "i40e-0000:3b:00.1:misc"),
		},
		want: []Match{
			withIRQ(41, q("i40e-ens801f0-TxRx-0", "intel", 0, TxRx)),
			withIRQ(42, q("i40e-ens801f0-TxRx-1", "intel", 1, TxRx)),
			withIRQ(43, q("i40e-ens801f0-rx-2", "intel", 2, Rx)),
			withIRQ(40, ctl("i40e-0000:3b:00.0:misc", "intel", reasonMisc)),
			withIRQ(44, ctl("i40e-0000:3b:00.0:fdir-TxRx-0", "intel", reasonFdir)),
			withIRQ(45, unk("i40e-0000:3b:00.1:misc", "belongs to another PCI function 0000:3b:00.1")),
		},
	}, {
		name: "virtio per-queue vectors",
		dev:  v,
		in: []Vector{
			vec(24, "virtio0-config"),
			vec(25, "virtio0-input.0"), vec(26, "virtio0-output.0"),
			vec(27, "virtio0-input.1"), vec(28, "virtio0-output.1"),
			vec(29, "virtio0-control"),
		},
		want: []Match{
			withIRQ(25, q("virtio0-input.0", "virtio", 0, Rx)),
			withIRQ(26, q("virtio0-output.0", "virtio", 0, Tx)),
			withIRQ(27, q("virtio0-input.1", "virtio", 1, Rx)),
			withIRQ(28, q("virtio0-output.1", "virtio", 1, Tx)),
			withIRQ(24, ctl("virtio0-config", "virtio", "virtio configuration-change vector")),
			withIRQ(29, ctl("virtio0-control", "virtio", "virtio-net control virtqueue")),
		},
	}, {
		name: "virtio single shared vector",
		dev:  v,
		in:   []Vector{vec(24, "virtio0-config"), vec(25, "virtio0-virtqueues")},
		want: []Match{
			withIRQ(24, ctl("virtio0-config", "virtio", "virtio configuration-change vector")),
			withIRQ(25, shared("virtio0-virtqueues", "virtio", reasonShared)),
		},
	}})
}

func TestClassifyNames(t *testing.T) {
	d := Device{Iface: "eth0", Driver: "ixgbe", BDF: "0000:02:00.0"}
	runClassifyCases(t, []classifyCase{{
		name: "several names: queue wins over control and unknown, in any position",
		dev:  d,
		in: []Vector{
			vec(16, "ahci[0000:00:1f.2]", "eth0", "eth0-TxRx-1"),
			vec(17, "ahci[0000:00:1f.2]", "eth0"),
			vec(18, "ahci[0000:00:1f.2]", "uhci_hcd:usb5"),
		},
		want: []Match{
			withIRQ(16, q("eth0-TxRx-1", "txrx", 1, TxRx)),
			withIRQ(17, ctl("eth0", "txrx", reasonLink)),
			withIRQ(18, unk("ahci[0000:00:1f.2]", "not a queue vector of eth0")),
		},
	}, {
		name: "no names",
		dev:  d,
		in:   []Vector{vec(21), vec(20, "")},
		want: []Match{withIRQ(20, unk("", reasonNoName)), withIRQ(21, unk("", reasonNoName))},
	}, {
		name: "empty set",
		dev:  d,
		in:   nil,
		want: []Match{},
	}})
}

func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{Unknown: "unknown", Queue: "queue", Control: "control", Shared: "shared", Kind(9): "Kind(9)"} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", int(k), got, want)
		}
	}
}

// The table itself: every pattern compiles for awkward names, Queue patterns
// capture a number, and names that carry no device are restricted to drivers.
func TestPatternTable(t *testing.T) {
	for _, p := range patterns {
		hasQ := strings.Contains(p.expr, "{q}")
		if hasQ != (p.kind == Queue) {
			t.Errorf("%q: kind %v but {q} present = %v", p.expr, p.kind, hasQ)
		}
		if p.kind == Queue && (p.dir == "") == !strings.Contains(p.expr, "{dir}") {
			t.Errorf("%q: a Queue pattern needs exactly one of a fixed dir and {dir}", p.expr)
		}
		if p.kind != Queue && p.reason == "" {
			t.Errorf("%q: non-queue pattern without a reason", p.expr)
		}
		anchored := strings.Contains(p.expr, "{iface}") || strings.Contains(p.expr, "{bdf}") || strings.Contains(p.expr, "{virtio}")
		if !anchored && len(p.drivers) == 0 {
			t.Errorf("%q identifies no device and has no driver restriction", p.expr)
		}
	}
	for _, d := range []Device{
		{Iface: `a.b*c+(d)[e]{f}|g\h^$?`, BDF: "0000:00:00.0", VirtioDev: "virtio(0)", Driver: "gve"},
		{Driver: "idpf"}, {Driver: "mana"}, {Driver: "hns3"}, {},
	} {
		m := newMatcher(d)
		if d.Iface != "" && len(m.rules) < len(patterns)-6 {
			t.Errorf("%+v: only %d of %d patterns compiled", d, len(m.rules), len(patterns))
		}
		if d.Iface != "" {
			if got := m.match(d.Iface + "-TxRx-2"); got.Kind != Queue || got.Queue != 2 {
				t.Errorf("%+v: own TxRx name classified as %+v", d, got)
			}
		}
	}
}

// Interface names are bytes; one that is not UTF-8 cannot be put in a
// regexp, so its patterns are skipped rather than panicking.
func TestInvalidUTF8Iface(t *testing.T) {
	d := Device{Iface: "eth\xff", BDF: "0000:3b:00.0"}
	if got := MatchName(d, "eth\xff-TxRx-0"); got.Kind != Unknown {
		t.Errorf("got %+v, want Unknown", got)
	}
	if got := MatchName(d, "mlx5_comp1@pci:0000:3b:00.0"); got.Kind != Queue || got.Queue != 1 {
		t.Errorf("BDF patterns must still work, got %+v", got)
	}
}
