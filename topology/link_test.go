package topology

import (
	"strings"
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

func TestMTU(t *testing.T) {
	r, _ := fixture(t, "netfacts/host")
	for _, tt := range []struct {
		iface string
		mtu   int
		err   string
	}{
		{"eth0", 9000, ""},
		{"lo", 65536, ""},
		{"bad0", 0, `"lots" is not an integer`},
		{"zero0", 0, "0 is not an MTU"},
		{"gone0", 0, "no such file"},
	} {
		mtu, err := MTU(r, tt.iface)
		if mtu != tt.mtu || (tt.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("MTU(%s) = %d, %v; want %d, %q", tt.iface, mtu, err, tt.mtu, tt.err)
		}
	}
}
