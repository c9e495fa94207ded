//go:build linux

package pktgentest

import (
	"errors"
	"sync"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/linerate/linerate/internal/bpftest"
)

// liveFrames is bpftest.HaveXDPLiveFrames, asked once per test process.
var liveFrames = sync.OnceValue(bpftest.HaveXDPLiveFrames)

// SkipUnlessLiveFrames skips t where the kernel lacks BPF_PROG_RUN's
// live-frame mode or refuses it to this process (bpftest.HaveXDPLiveFrames),
// so that the xdp backend cannot send here at all; anything else fails t.
// Where the host refuses it, the VM lab's guests still run the xdp backend
// (TestLabVMHosts/xdp).
func SkipUnlessLiveFrames(t testing.TB) {
	t.Helper()
	bpftest.SkipIfNotSupported(t, liveFrames())
}

// LiveFramesRefused says whether SkipUnlessLiveFrames would skip, with
// why: where it would, `auto` and `userspace` choose AF_XDP.
func LiveFramesRefused() (bool, error) {
	err := liveFrames()
	return errors.Is(err, ebpf.ErrNotSupported), err
}
