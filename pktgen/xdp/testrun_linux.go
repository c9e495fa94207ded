//go:build linux

package xdp

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// bpfProgTestRun is BPF_PROG_TEST_RUN (alias BPF_PROG_RUN).
const bpfProgTestRun = 10

// testRunAttr is the BPF_PROG_TEST_RUN part of union bpf_attr.
type testRunAttr struct {
	progFD      uint32
	retval      uint32
	dataSizeIn  uint32
	dataSizeOut uint32
	dataIn      uint64
	dataOut     uint64
	repeat      uint32
	duration    uint32
	ctxSizeIn   uint32
	ctxSizeOut  uint32
	ctxIn       uint64
	ctxOut      uint64
	flags       uint32
	cpu         uint32
	batchSize   uint32
	_           uint32
}

// xdpMD is struct xdp_md as BPF_PROG_RUN takes it for the context.
type xdpMD struct {
	data, dataEnd, dataMeta uint32
	ingressIfindex          uint32
	rxQueueIndex            uint32
	egressIfindex           uint32
}

// progRun runs prog fd over data in live-frame mode, repeat times, on
// the calling CPU. It is the raw syscall, not cilium/ebpf's Program.Run,
// because that repeats the whole run after EINTR: here EINTR returns to
// the caller, which is how a stop interrupts a long run (a signal to the
// thread; the program's count says what was sent).
func progRun(fd int, data []byte, md *xdpMD, repeat, batch uint32) error {
	attr := testRunAttr{
		progFD:     uint32(fd),
		dataSizeIn: uint32(len(data)),
		dataIn:     uint64(uintptr(unsafe.Pointer(&data[0]))),
		repeat:     repeat,
		ctxSizeIn:  uint32(unsafe.Sizeof(*md)),
		ctxIn:      uint64(uintptr(unsafe.Pointer(md))),
		flags:      unix.BPF_F_TEST_XDP_LIVE_FRAMES,
		batchSize:  batch,
	}
	_, _, errno := unix.Syscall(unix.SYS_BPF, bpfProgTestRun, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr))
	runtime.KeepAlive(data)
	runtime.KeepAlive(md)
	if errno != 0 {
		return errno
	}
	return nil
}
