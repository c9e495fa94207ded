package agent

import (
	"errors"
	"net"
	"net/netip"
	"slices"
	"testing"

	"github.com/linerate/linerate/pktgen"
)

func TestInventoryDescribe(t *testing.T) {
	mac, _ := net.ParseMAC("02:00:00:00:00:02")
	s := unitService(t, RoleReceiver, fakeNetOS{
		addrs: map[string][]netip.Addr{"data0": addrs("198.18.0.2", "fe80::2")},
		macs:  map[string]net.HardwareAddr{"data0": mac},
	})
	s.inv.inspect()
	d := s.inv.describe("v1")
	if d.link.mac.String() != "02:00:00:00:00:02" || !slices.Equal(d.link.ips(), []string{"198.18.0.2", "fe80::2"}) || d.link.mtu != 1500 || d.linkErr != nil {
		t.Errorf("link: %+v %v", d.link, d.linkErr)
	}
	if !d.driverOK || d.driver.Driver != "fake" || d.version != "v1" || d.role != RoleReceiver {
		t.Errorf("describe: %+v", d)
	}
	if d.nic.err == nil || d.nic.numa != -1 || d.nic.queues != 0 {
		t.Errorf("an empty root has no NIC topology: %+v", d.nic)
	}
	if d.backends != nil {
		t.Errorf("a receiver has backends %v", d.backends)
	}
	p := describeToProto(d)
	if p.Nic.Mac != "02:00:00:00:00:02" || p.Nic.Driver != "fake" || p.Nic.NumaNode != -1 || len(p.Nic.Warnings) != 1 || p.Lease != nil {
		t.Errorf("describe proto: %v", p)
	}

	broken := unitService(t, RoleSender, fakeNetOS{err: errors.New("netlink: operation not permitted")})
	d = broken.inv.describe("v1")
	if d.linkErr == nil || d.link.mac != nil || d.linkWarning() != "interface data0: netlink: operation not permitted" {
		t.Errorf("an unreadable interface: %+v", d)
	}
	if d.methods != nil {
		t.Errorf("a sender has receiver methods %v", d.methods)
	}
}

// TestInventoryFixedBackend: an agent given its generator (Config.Backend)
// sends with it alone, so it announces that backend and nothing else —
// no probe of the host's (the afxdp one binds a socket on the NIC's queue
// 0, which agents sharing an interface would take in turn).
func TestInventoryFixedBackend(t *testing.T) {
	s := unitServiceOf(t, Config{Role: RoleSender, Backend: blockingBackend{}, netOS: fakeNetOS{}})
	if got := s.inv.backends(); !slices.Equal(got, []pktgen.BackendName{"blocking"}) {
		t.Errorf("backends %v, want the given one alone", got)
	}
	if s.inv.afxdpErr != nil {
		t.Errorf("the afxdp backend was probed: %v", s.inv.afxdpErr)
	}
}
