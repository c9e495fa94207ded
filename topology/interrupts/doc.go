// Package interrupts parses /proc/interrupts.
//
// The first non-blank line is the header: one "CPUn" column per online
// CPU. Offline CPUs are absent, so the header may read "CPU0 CPU1 CPU3";
// every count column is mapped to a CPU id through the header, never by
// position.
//
// Each following line is "NAME: counts... tail". Rows whose name is a
// number are IRQs; the others (NMI, LOC, ERR, MIS, PIN, IPI0, ...) are kept
// as [Row] values. The tail of an IRQ row is split into chip, hwirq,
// trigger (flow handler name) and actions by locating the trigger token.
// The layouts understood include:
//
//	3.x:       PCI-MSI-edge  mlx5_comp0@pci:0000:81:00.0   (chip+trigger, no hwirq)
//	Xen:       xen-pirq-msi-x  eth0-TxRx-0
//	4.x:       IR-PCI-MSI 524288-edge  i40e-eth0-TxRx-0
//	6.x:       IR-PCI-MSIX-0000:01:00.0  1-edge  mlx5_comp0@pci:0000:01:00.0
//	spaces:    Hyper-V PCIe MSI 2701534461953-edge  mlx5_comp0@pci:4ea0:00:02.0
//	ARM:       GICv3  25 Level  arch_timer
//	shared:    IO-APIC  16-fasteoi  uhci_hcd:usb5, uhci_hcd:usb11
//
// Leading spaces may be missing, tabs may replace spaces, blank lines are
// skipped and a trailing '\r' is tolerated. Numeric rows with fewer counts
// than header CPUs leave the missing CPUs out of [IRQ.Counts].
//
// Kernels have changed this format many times; callers matching device
// names should prefer [IRQ.HasAction], which falls back to an anchored match
// against the whole tail when the actions cannot be separated.
package interrupts
