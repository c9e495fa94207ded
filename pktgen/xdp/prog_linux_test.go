//go:build linux

package xdp

import (
	"encoding/binary"
	"net"
	"net/netip"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/linerate/linerate/pktgen"
)

// TestClockEvery checks that a clock group is the transmit bulk or less,
// and always divides the batch (a group never spans two batches).
func TestClockEvery(t *testing.T) {
	for _, c := range []struct{ batch, want uint32 }{
		{64, 16}, {256, 16}, {16, 16}, {48, 16}, {8, 8}, {24, 8}, {100, 4}, {6, 2}, {1, 1}, {255, 1},
	} {
		if got := clockEvery(c.batch); got != c.want || c.batch%got != 0 {
			t.Errorf("clockEvery(%d) = %d, want %d", c.batch, got, c.want)
		}
	}
}

// A tagged frame's program writes the Ethernet header and the tag into
// every frame (a veth peer untags in place, and live-frame mode
// recycles the page); an untagged frame's writes none of it.
func TestTaggedHeaderRewritten(t *testing.T) {
	state, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: 1})
	if err != nil {
		t.Skipf("a BPF map for the program's state: %v (needs CAP_BPF)", err)
	}
	defer state.Close()
	stores := func(tagged bool) map[int16]int64 {
		cfg := &pktgen.Config{Device: "d", CPUs: []int{0}, PktSize: 62, Count: 1,
			DstMin: netip.MustParseAddr("198.18.0.2"), SrcMin: netip.MustParseAddr("198.18.0.1"),
			DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, HasVLAN: tagged, VLANID: 100}
		f, err := pktgen.BuildFrame(cfg, 0, cfg.SrcMAC)
		if err != nil {
			t.Fatal(err)
		}
		out := map[int16]int64{}
		for _, in := range instructions(paramsOf(f, 1, 64), state) {
			if in.OpCode.Class() == asm.StClass && in.Dst == asm.R7 && in.Offset < 18 {
				out[in.Offset] = in.Constant
			}
		}
		return out
	}
	if got := stores(false); len(got) != 0 {
		t.Errorf("untagged: stores into the Ethernet header %v", got)
	}
	got := stores(true)
	hdr := []byte{2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x81, 0x00, 0x00, 100, 0x08, 0x00}
	for off, size := range map[int16]int{0: 4, 4: 4, 8: 4, 12: 4, 16: 2} {
		b := hdr[off : int(off)+size]
		var want int64
		if size == 4 {
			want = int64(int32(binary.NativeEndian.Uint32(b)))
		} else {
			want = int64(int16(binary.NativeEndian.Uint16(b)))
		}
		if v, ok := got[off]; !ok || v != want {
			t.Errorf("tagged: offset %d: store %#x (%v), want %#x (% x)", off, v, ok, want, b)
		}
	}
}

// TestTrimRebuildsFrame runs the generator (BPF_PROG_RUN, not live) on
// a template rebuildTrim bytes longer than the frame, as a run on a
// driver of rebuildDrivers does: the run cuts them off (the bounds
// change, which has a live-frame kernel rebuild the frame's descriptor),
// transmits, and the frame that comes out is the frame, stamped with
// sequence 1; without trim the template goes out as it is.
func TestTrimRebuildsFrame(t *testing.T) {
	cfg := &pktgen.Config{Device: "d", CPUs: []int{0}, PktSize: 60, Count: 1, Flags: []string{"NO_TIMESTAMP"},
		DstMin: netip.MustParseAddr("198.18.0.2"), SrcMin: netip.MustParseAddr("198.18.0.1"),
		DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}}
	f, err := pktgen.BuildFrame(cfg, 0, cfg.SrcMAC)
	if err != nil {
		t.Fatal(err)
	}
	for _, trim := range []int{0, rebuildTrim} {
		// A slot for every CPU: the run is on whichever the test is on.
		cpus := ebpf.MustPossibleCPU()
		p := paramsOf(f, cpus, 64)
		p.trim = int32(trim)
		prog, state, err := newGenerator(p)
		if err != nil {
			t.Skipf("load the generator: %v (needs CAP_BPF)", err)
		}
		slots := make([]byte, cpus*slotLen)
		for c := range cpus {
			binary.NativeEndian.PutUint64(slots[c*slotLen+stLimit:], 10)
		}
		if err := state.Update(uint32(0), slots, ebpf.UpdateAny); err != nil {
			t.Fatal(err)
		}
		in := append(append([]byte(nil), f.Bytes...), make([]byte, trim)...)
		opts := &ebpf.RunOptions{Data: in, DataOut: make([]byte, len(in)+256)}
		ret, err := prog.Run(opts)
		prog.Close()
		state.Close()
		if err != nil {
			t.Fatalf("trim %d: run: %v", trim, err)
		}
		out := opts.DataOut // cut to what the run left
		if ret != xdpTX || len(out) != len(f.Bytes) || binary.BigEndian.Uint32(out[f.HdrOff+4:]) != 1 {
			t.Errorf("trim %d: verdict %d, %d bytes out, sequence %d: want XDP_TX, the %d-byte frame, sequence 1", trim, ret, len(out), binary.BigEndian.Uint32(out[f.HdrOff+4:]), len(f.Bytes))
		}
	}
}
