// Package irqname classifies the action names NIC drivers give their MSI-X vectors.
//
// The topology code finds a NIC's vectors by number (msi_irqs in sysfs) and then
// has to tell, from the action names in /sys/kernel/irq/N/actions or
// /proc/interrupts, which vectors carry which queue and which ones are control
// vectors that must be left alone. This package does only that naming part:
// [MatchName] classifies one name, [Classify] classifies the vectors of one
// device and applies the renumbering quirks that need the whole set.
//
// # Names are not an ABI
//
// The names come from the format strings drivers pass to request_irq (and
// kasprintf/snprintf before it). They are not a kernel interface and have
// changed several times: ENA, gve, hns3, idpf and mlx5 all renamed or
// renumbered their vectors in the last years. Every pattern is therefore
// tried for every name whatever the driver is (drivers get renamed too);
// [Device.Driver] only switches on quirks. Further caveats:
//
//   - Names that embed the interface name were formatted when the IRQ was
//     requested (usually at ndo_open); after a rename of a running interface
//     they carry the old name until the next down/up.
//   - An interface that is down usually has MSI-X vectors but no action names.
//   - A few names identify no device at all ("idpf-Mailbox-0", "mana_intr",
//     gve's literal "eth%d-ntfy-block.N"); they are claimed only when
//     Device.Driver names the driver that produces them.
//
// # Families
//
// The Family of a [Match] names the pattern that matched (name formats are
// quoted from the drivers; <bdf> is the PCI address, N a number):
//
//	mlx5    mlx5_comp<N>@pci:<bdf>; control mlx5_async<N>, old mlx5_{async,cmd,pages}_eq;
//	        shared mlx5_combined<N> (a single vector for everything)
//	mlx4    mlx4-<N>@<bdf>, old mlx4-comp-<N>@pci:<bdf>; control mlx4-async@pci:<bdf>
//	intel   {i40e,ice,idpf,iecm,iavf,i40evf}-<iface>-TxRx-<N> (and unpaired -rx-/-tx-, idpf -Rx-/-Tx-);
//	        control i40e-<bdf>:misc, :fdir-TxRx-<N>, ice :ctrl-TxRx-<N>, iavf-<bdf>:mbx, idpf-Mailbox-<N>
//	txrx    <iface>-TxRx-<N> (ixgbe, ixgbevf, igb, igbvf, igc, alx, bnxt_en shared rings, old hns3);
//	        control: the bare <iface> vector (link/mailbox), <iface>-lsc
//	split   <iface>-rx-<N> / <iface>-tx-<N> (ixgbe, igb, e1000e, i40e-style drivers, bnxt_en and bnge
//	        split rings, sfc split channels, vmxnet3 unshared vectors, old hns3 -Rx-/-Tx-)
//	ena     <iface>-Tx-Rx-<N>; control ena-mgmnt@pci:<bdf>
//	gve     gve-ntfy-blk<N>@pci:<bdf>, old <iface>-ntfy-block.<N>; control gve-mgmnt@pci:<bdf>
//	virtio  virtio<K>-input.<N> (rx), virtio<K>-output.<N> (tx); control virtio<K>-config,
//	        virtio<K>-control; shared virtio<K>-virtqueues (no per-queue vectors)
//	sfc     <iface>-<N> (sfc/efx channels; tg3 and bnx2 use the same format); control <iface>-xdp-<N>
//	        (XDP transmit channels), <iface>-ptp
//	hns3    hns3-<bdf>-TxRx-<N> (and -Rx-/-Tx-); control hclge-misc-<bdf>, hclgevf-misc-<bdf>
//	fp      <iface>-fp-<N> (qede, bnx2x)
//	rxtx    <iface>-rxtx-<N> (nfp, vmxnet3, octeontx2); control <iface>-event-<N> (vmxnet3), <iface>-exn (nfp)
//	mana    mana_q<N>@pci:<bdf>; control mana_hwc@pci:<bdf>, very old mana_intr
//
// # Numbering quirks applied by Classify
//
//   - hns3 steps its TxRx counter by two (0, 2, 4, ...): queues are renumbered by
//     rank per direction. The same applies to old hns3 names when Device.Driver is hns3.
//   - idpf before the fix "idpf: use vector index for IRQ names" numbered vectors
//     by MSI-X index (TxRx-1, TxRx-3, ...): queues are renumbered by rank.
//   - bnxt_en/bnge split rings number tx after rx (rx-0..n-1, tx-n..2n-1); vmxnet3
//     numbers rx after tx. The later direction is shifted down to pair with the other.
//   - gve notification blocks are TX for the lower half and RX for the upper half.
//   - mlx5 between "Use dynamic msix vectors allocation" and "offset comp irq
//     index in name by one" (and mlx4, whose vector 0 is the async EQ) number
//     completion vectors from 1; such a set is shifted down to start at 0.
//   - The queue index always comes from the name, never from the IRQ number
//     (mlx5 comp IRQ numbers are not monotonic in the index).
//
// Sources: the request_irq name formats in the Linux drivers (mlx5 pci_irq.c,
// mlx4 eq.c, i40e_main.c, ice_lib.c, idpf_txrx.c/idpf_lib.c, iavf_main.c,
// ixgbe_main.c, igb_main.c, bnxt.c, ena_netdev.c, gve_main.c, virtio_pci_common.c
// with virtio_net.c, sfc efx_channels.c, hns3_enet.c with hclge_main.c,
// qede_main.c, bnx2x_cmn.c, nfp_net_common.c, vmxnet3_drv.c, otx2_pf.c,
// mana gdma_main.c) as summarised in the project's IRQ research notes.
package irqname
