package topology

import (
	"testing"

	"github.com/linerate/linerate/internal/fsfixture"
)

func TestLinkSpeedAndPCIModel(t *testing.T) {
	a, err := fsfixture.Parse([]byte(`-- sys/class/net/eth1/speed --
25000
-- sys/class/net/eth1/device/vendor --
0x8086
-- sys/class/net/eth1/device/device --
0x1592
-- sys/class/net/veth0/speed --
-1
`))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := a.Unpack(dir); err != nil {
		t.Fatal(err)
	}
	r, err := OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := LinkSpeedMbps(r, "eth1"); got != 25000 {
		t.Errorf("eth1 speed %d", got)
	}
	if got := PCIModel(r, "eth1"); got != "8086:1592" {
		t.Errorf("eth1 model %q", got)
	}
	if got, model := LinkSpeedMbps(r, "veth0"), PCIModel(r, "veth0"); got != 0 || model != "" {
		t.Errorf("veth0: speed %d model %q", got, model)
	}
	if got := LinkSpeedMbps(r, "gone0"); got != 0 {
		t.Errorf("missing interface: speed %d", got)
	}
}
