//go:build linux

package receiver

import (
	"errors"
	"slices"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"
)

// TestAFXDPAdjustMetaProbe: the probe agrees with the kernel. Where this
// kernel loads the stamped redirect program the probe says the helper is
// there, and loadRedirector's program stamps; where it refuses that
// program (EINVAL: this host's kernel) the probe says ebpf.ErrNotSupported,
// and loadRedirector still loads, without the stamp. The VM guests' kernel
// (Debian 6.1) allows the helper: TestLabVMHosts' afxdp receiver runs the
// stamping branch there.
func TestAFXDPAdjustMetaProbe(t *testing.T) {
	skipUnlessRoot(t)
	probe := probeAdjustMeta(loadReleased)

	xsks, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.XSKMap, KeySize: 4, ValueSize: 4, MaxEntries: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer xsks.Close()
	other, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: 8, MaxEntries: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	clk := bpfClocks()
	stamped := loadReleased(&ebpf.ProgramSpec{Type: ebpf.XDP, License: "Dual MIT/GPL", Instructions: redirectProgram(xsks.FD(), other.FD(), clk.helper, true)})
	switch {
	case stamped == nil && probe != nil:
		t.Errorf("the kernel loads the stamped redirect program, the probe says %v", probe)
	case stamped != nil && !(errors.Is(stamped, unix.EINVAL) && errors.Is(probe, ebpf.ErrNotSupported)):
		t.Errorf("the kernel refuses the stamped redirect program (%v), the probe says %v: want ErrNotSupported", stamped, probe)
	}
	t.Logf("bpf_xdp_adjust_meta in XDP programs: probe %v (the stamped redirect program: %v)", probe, stamped)

	r, err := loadRedirector(2, clk, debugLog{t})
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	if r.stamps != (stamped == nil) {
		t.Errorf("loadRedirector stamps %v, want %v: the kernel's answer", r.stamps, stamped == nil)
	}
}

// TestAFXDPAdjustMetaDecision: the probe's decision from what a loader
// answers for the program without the helper and the one calling it.
// Only a refusal of the call (EINVAL) where the same program without it
// loads says the kernel lacks it; a refusal of both, or any other
// error, is the probe failing and said as such.
func TestAFXDPAdjustMetaDecision(t *testing.T) {
	for _, c := range []struct {
		name        string
		bare, call  error
		ok, missing bool
		want        string
	}{
		{name: "both load", ok: true},
		{name: "the call refused", call: unix.EINVAL, missing: true, want: "bpf_xdp_adjust_meta in XDP programs (refused in a program calling it, which loads without the call): not supported here: invalid argument"},
		{name: "both refused", bare: unix.EINVAL, call: unix.EINVAL, want: "probe bpf_xdp_adjust_meta: load an XDP program without it: invalid argument"},
		{name: "no permission", bare: unix.EPERM, call: unix.EPERM, want: "probe bpf_xdp_adjust_meta: load an XDP program without it: operation not permitted"},
		{name: "the call out of memory", call: unix.ENOMEM, want: "probe bpf_xdp_adjust_meta: load an XDP program calling it: cannot allocate memory"},
	} {
		var loaded []bool
		err := probeAdjustMeta(func(s *ebpf.ProgramSpec) error {
			calls := false
			for _, ins := range s.Instructions {
				if ins.IsBuiltinCall() && asm.BuiltinFunc(ins.Constant) == asm.FnXdpAdjustMeta {
					calls = true
				}
			}
			if s.Type != ebpf.XDP {
				t.Errorf("%s: probe program of type %v, want XDP", c.name, s.Type)
			}
			loaded = append(loaded, calls)
			if calls {
				return c.call
			}
			return c.bare
		})
		switch {
		case c.ok && err != nil:
			t.Errorf("%s: %v, want nil", c.name, err)
		case !c.ok && (err == nil || err.Error() != c.want):
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		case errors.Is(err, ebpf.ErrNotSupported) != c.missing:
			t.Errorf("%s: %v: ErrNotSupported %v, want %v", c.name, err, !c.missing, c.missing)
		}
		want := []bool{false, true}
		if c.bare != nil {
			want = want[:1] // the call is not tried when the bare program fails
		}
		if !slices.Equal(loaded, want) {
			t.Errorf("%s: loaded programs calling the helper %v, want %v", c.name, loaded, want)
		}
	}
}

// debugLog is loadRedirector's log in a test: its debug lines in t's.
type debugLog struct{ t *testing.T }

func (l debugLog) Debug(msg string, args ...any) { l.t.Log(append([]any{msg}, args...)...) }
