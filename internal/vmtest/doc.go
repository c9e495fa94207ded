// Package vmtest boots a real Debian kernel under qemu so that tests can
// check, in every CI run, what only a real kernel shows: IRQ affinity
// writes, virtio multiqueue vectors, NUMA placement, pktgen.
//
// FetchKernel downloads Debian's cloud kernel image and busybox-static at
// the versions pinned in pins.txt with `apt-get download
// package=version`, checks each .deb's sha256 against the pin, unpacks
// them with `dpkg -x` into a cache
// (.cache/vmtest at the module root, or $LINERATE_VMTEST_CACHE) and writes
// the modules.dep that Debian's packages leave to depmod. Guest.Run writes
// a newc initramfs (busybox, the named modules with their dependencies,
// the caller's files, an /init running the caller's script), boots it with
// qemu-system-x86_64 under TCG, and returns the serial console and the
// script's exit status.
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
