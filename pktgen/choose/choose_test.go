package choose

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/linerate/linerate/pktgen"
)

// A host without pktgen: "kernel" is refused by name, "auto" falls to a
// userspace backend (afpacket on an interface XDP cannot use), and the
// module loader is tried once.
func TestBackendWithoutPktgen(t *testing.T) {
	none := &pktgen.Kernel{Proc: pktgen.DirProc{Dir: t.TempDir() + "/none"}}
	if err := KernelAvailable(none); !errors.Is(err, pktgen.ErrNoPktgen) {
		t.Errorf("KernelAvailable without pktgen: %v", err)
	}
	if _, _, err := Backend("kernel", "lo", Options{Kernel: none}); !errors.Is(err, pktgen.ErrNoPktgen) {
		t.Errorf("kernel without pktgen: %v", err)
	}
	loads := 0
	b, why, err := Backend("auto", "nosuch0", Options{Kernel: none, LoadModule: func() error { loads++; return errors.New("not root") }})
	if err != nil || b.Name() != "afpacket" || why == "" || loads != 1 {
		t.Errorf("auto: %v %q %v, %d loads", b, why, err, loads)
	}
	if _, _, err := Backend("fpga", "lo", Options{Kernel: none}); !errors.Is(err, ErrUnknown) {
		t.Errorf("unknown name: %v", err)
	}
	if b, _, err := Backend("afpacket", "lo", Options{Kernel: none}); err != nil || b.Name() != "afpacket" {
		t.Errorf("afpacket: %v %v", b, err)
	}
}

// Every name of pktgen.BackendNames is one choose resolves (or refuses
// for the host, never as unknown), and the error for another names them.
func TestBackendNames(t *testing.T) {
	none := &pktgen.Kernel{Proc: pktgen.DirProc{Dir: t.TempDir() + "/none"}}
	for _, name := range pktgen.BackendNames {
		if _, _, err := Backend(name, "lo", Options{Kernel: none}); errors.Is(err, ErrUnknown) {
			t.Errorf("%s: %v", name, err)
		}
	}
	_, _, err := Backend("fpga", "lo", Options{Kernel: none})
	if want := `unknown backend "fpga": valid backends are auto, kernel, xdp, afxdp, afpacket and userspace`; err == nil || err.Error() != want {
		t.Errorf("fpga: %v, want %q", err, want)
	}
}

// A readable pgctrl is a kernel pktgen available.
func TestKernelAvailable(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pgctrl"), []byte("Packet Generator (version): 2.75\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := KernelAvailable(&pktgen.Kernel{Proc: pktgen.DirProc{Dir: dir}}); err != nil {
		t.Errorf("pgctrl present: %v", err)
	}
}
