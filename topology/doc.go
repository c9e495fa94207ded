// Package topology reads a host's NIC, CPU and IRQ layout and pins a NIC's
// queue IRQs to CPUs, reversibly.
//
// Everything goes through a [Root], the host's filesystem: [OpenRoot]("/")
// is the live host, a directory is a fixture tree or an unpacked snapshot
// (--root). Nothing in the package reads the host any other way (an
// interface's addresses, which no file lists, are the agent's to read:
// [SourceAddr] picks the default source among them).
//
// A tuning runs in this order:
//
//   - [Inspect] reads one interface from sysfs and procfs: driver, PCI
//     function, NUMA node and its CPUs, isolated CPUs, and the queue and
//     control vectors among its IRQs (named by [irqname], counted by
//     [interrupts]).
//   - [MakePlan] maps each queue IRQ to one CPU. It is pure.
//   - [Apply] writes the [Journal] of original affinities to the state
//     directory ([DefaultStateDir]) before the first change, then writes
//     /proc/irq/N/smp_affinity_list (smp_affinity on old kernels) and reads
//     it back, retrying, moving to the next CPU or skipping managed IRQs as
//     the kernel answers; a hard
//     failure rolls everything back. It refuses while irqbalance runs
//     unless told to ignore it.
//   - [Verify] samples /proc/interrupts twice and reports which CPUs
//     serviced each queue IRQ in between.
//   - [Restore] writes the journals' affinities back and removes them. It
//     is idempotent, so it also undoes what a crashed run left (the agent
//     calls it at start).
//   - A [Journal] records its owner ([AgentOwner], [OwnerIRQApply]): an
//     Apply or a Restore given an owner leaves another owner's journal
//     alone ([ErrJournalOwner]); one without an owner (written before
//     journals had one) counts as the asker's.
//
// [NewRecorder] wraps a Root and keeps every file read through it, so a
// host's view can be written out with [Recorder.WriteTarGz] and replayed
// elsewhere ([ExtractTarGz], then --root). [ShowReport] and [PlanReport]
// are the JSON contract of `linerate irq show` and `irq plan`. The
// commands run each step from an interface's name (iface.go: [ShowIface],
// [PlanIface], [VerifyIface], [RecordIface]) and print what it returns
// ([Report.WriteTable], [ApplyResult.WriteTable], [WriteRestores]).
//
// It also holds the host facts the senders need, read through the same
// Root: [MTU], [LinkSpeedMbps], [PCIModel], [OnlineCPUs], the IPv4
// [Neighbour] from /proc/net/arp, and [SourceAddr], the one rule for a
// default source address (link-local skipped).
//
// Privileges: reading needs none. Apply and Restore write /proc/irq and so
// need root; the state directory must
// be writable. Managed IRQs cannot be moved on any kernel (EIO before 6.12,
// EPERM after) and are reported as skipped.
//
// Subpackages: [cpuset] parses and formats the kernel's CPU list and mask
// syntaxes, [interrupts] parses /proc/interrupts, [irqname] classifies the
// vector names drivers give their IRQs.
package topology
