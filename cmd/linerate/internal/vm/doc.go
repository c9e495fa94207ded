// Package vm runs real Linux guests under qemu: Debian's cloud kernel and
// a busybox initramfs, for lab hosts that run a real `linerate agent`
// (`linerate lab … --hosts vm`) and for the real-kernel tests of
// cmd/linerate/internal/vmtest.
//
// FetchKernel downloads the kernel image and busybox-static at the
// versions pinned in pins.txt (embedded, so an installed binary has them)
// with `apt-get download package=version`, checks each .deb's sha256,
// unpacks them with `dpkg -x` into a cache (DefaultCacheDir:
// $LINERATE_VM_CACHE, /var/cache/linerate/vm for root, else
// ~/.cache/linerate/vm; never the working tree) and writes the
// modules.dep Debian leaves to depmod. ModuleDB resolves modules with
// their dependencies; Initramfs writes a newc archive (CPIOWriter) of
// busybox, modules, files and an /init.
//
// A Machine is one long-running guest: Layout.VCPUs split over two NUMA
// nodes, a data NIC of Layout.Queues queue pairs behind a PCI expander
// bridge on node 1 (as a NIC sits on one socket of a two-socket server),
// a single-queue management NIC, both on host taps given by the caller.
// Its /init mounts proc, sys, dev, /tmp, /run and bpffs, loads the
// modules, renames each NIC (found by MAC) and sets its address, starts
// a root shell on the third serial port and runs the Script in its own
// process group with its output on the second; the guest powers off when
// the Script ends. A setup failure is one "linerate-vm: setup failed:
// WHAT" line on the console. Everything of a guest is in its Dir:
//
//	console.log  ttyS0: the kernel and /init
//	agent.log    ttyS1: the Script's stdout and stderr
//	shell.sock   ttyS2: the root shell Exec talks to
//	qemu.pid     qemu's pid (written by qemu), for StopDir
//	qemu.log     qemu's own messages
//
// Start returns once the machine runs (in its own process group, with no
// parent-death signal: guests outlive a killed coordinator). Exec runs a
// shell command in the guest and returns its exact output and exit
// status (a framed, base64 protocol with a nonce per request, so nothing
// else on the line is taken for a reply); it works from the directory
// alone, in any later process. Running.Stop sends SIGTERM to the Script's
// process group through the shell and waits for the guest to power off,
// killing qemu at the timeout; StopDir does the same from the directory,
// after checking that the pid is a qemu of that directory; Kill is
// SIGKILL now.
//
// Accel picks KVM when it works here, else TCG. Under TCG on this
// project's 2-CPU CI machine a 4-vCPU guest answers Exec about 3 to 4 s
// after Start.
package vm
