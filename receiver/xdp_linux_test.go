//go:build linux

package receiver

import (
	"os"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/google/go-cmp/cmp"
)

func skipUnlessRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: loads BPF programs")
	}
}

// TestXDPProgramMatchesTable runs every accounting case through the XDP
// program in the kernel (BPF_PROG_TEST_RUN, no interface needed) and
// checks it counts exactly what the Go core counts.
func TestXDPProgramMatchesTable(t *testing.T) {
	skipUnlessRoot(t)
	for _, tt := range tableCases() {
		for _, pass := range []bool{false, true} {
			t.Run(tt.name, func(t *testing.T) {
				opts := tt.opts
				if opts.SeqCapacity == 0 {
					opts.SeqCapacity = 1 << 16 // not the default 256 MiB of sequence array per case
				}
				o := mustOptions(t, opts)
				o.Pass = pass
				x, err := loadXDP(o)
				if err != nil {
					t.Fatal(err)
				}
				defer x.close()
				wantTest, wantOther := uint32(xdpDrop), uint32(xdpPass)
				if pass {
					wantTest = xdpPass
				}
				other := tt.other
				for i, f := range tt.frames {
					if len(f) < 14 { // BPF_PROG_TEST_RUN wants an Ethernet header
						other--
						continue
					}
					ret, err := x.prog.Run(&ebpf.RunOptions{Data: f})
					if err != nil {
						t.Fatal(err)
					}
					var k streamKey
					if _, ok := parseFrame(f, &k); ok && ret != wantTest || !ok && ret != wantOther {
						t.Fatalf("frame %d (test packet %v): verdict %d", i, ok, ret)
					}
				}
				c, err := x.read(true)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, c.streams, cmpAddr); diff != "" {
					t.Errorf("streams (-want +got):\n%s", diff)
				}
				if c.other != other || c.overflow != tt.overflow {
					t.Errorf("other, overflow = %d, %d; want %d, %d", c.other, c.overflow, other, tt.overflow)
				}
			})
		}
	}
}

// TestAtomicEncoding: the fetch-or and fetch-add the program relies on
// marshal to the kernel's immediates (see atomicFetch).
func TestAtomicEncoding(t *testing.T) {
	for _, tt := range []struct {
		op   asm.AtomicOp
		want int64
	}{{asm.FetchOr, 0x41}, {asm.FetchAdd, 0x01}} {
		if got := atomicImm(atomicFetch(tt.op, asm.R0, asm.R1, 0)); got != tt.want {
			t.Errorf("%v: imm %#x, want %#x", tt.op, got, tt.want)
		}
	}
	if got := atomicImm(asm.AddAtomic.Mem(asm.R0, asm.R1, asm.DWord, 0)); got != 0 {
		t.Errorf("atomic add: imm %#x, want 0", got)
	}
}
