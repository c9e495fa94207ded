// Package vmtest is the real-kernel test harness: it boots Debian's
// kernel (cmd/linerate/internal/vm) under qemu so that tests can check, in every CI
// run, what only a real kernel shows: IRQ affinity writes, virtio
// multiqueue vectors, NUMA placement, pktgen.
//
// SkipUnlessAvailable fetches the pinned kernel (vm.FetchKernel) into
// CacheDir (.cache/vmtest at the module root, or $LINERATE_VMTEST_CACHE)
// or skips the test (fails it in CI). Guest.Run writes a newc initramfs
// (busybox, the named modules with their dependencies, the caller's
// files, an /init running the caller's script), boots it with
// qemu-system-x86_64 under TCG, and returns the serial console and the
// script's exit status: one boot that runs to completion. Long-running
// guests (lab hosts) are vm.Machine.
//
// A host-side test looks like this:
//
//	k := vmtest.SkipUnlessAvailable(t)
//	bin := vmtest.BuildTestBinary(t, "github.com/linerate/linerate/topology")
//	res, err := (&vmtest.Guest{
//		Kernel:  k,
//		Modules: []string{"veth", "pktgen"},
//		Files:   map[string]string{"/bin/topology.test": bin},
//		Script:  "LINERATE_VMTEST_GUEST=1 /bin/topology.test -test.v -test.run '^TestGuest'",
//		Log:     vmtest.TestLogger(t),
//	}).Run(ctx)
//
// The guest has no network: qemu runs with -nodefaults, so it gets only
// the devices a test adds with QEMUArgs.
package vmtest
