//go:build linux

package lab

import (
	"fmt"
	"net/netip"

	lrnetns "github.com/linerate/linerate/internal/netns"
)

// addNetnsHost makes h a network namespace: data0 (and mgmt0) are veth
// ends whose peers h.Name (and "m"+h.Name) are in the switch namespace.
// data0 has addr and addr6; every end's IPv6 is quiet (netns.QuietIPv6).
func (l *Lab) addNetnsHost(h *Host, addr, addr6, mgmt netip.Prefix) error {
	var err error
	if h.NS, err = lrnetns.New(Prefix(l.Spec.Name) + h.Name); err != nil {
		return err
	}
	if h.Data, h.Switch, err = lrnetns.Veth(h.NS, "data0", l.Switch, h.Name, lrnetns.VethOptions{Queues: l.Spec.Queues, AddrA: addr, Addr6A: addr6}); err != nil {
		return err
	}
	if mgmt.IsValid() {
		if h.Mgmt, _, err = lrnetns.Veth(h.NS, "mgmt0", l.Switch, "m"+h.Name, lrnetns.VethOptions{AddrA: mgmt}); err != nil {
			return fmt.Errorf("management link: %w", err)
		}
	}
	return nil
}
