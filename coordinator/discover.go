package coordinator

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	"github.com/linerate/linerate/internal/cluster/gossip"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// discover finds every named agent alive in the cluster with a role that
// fits, and dials it.
func (st *runState) discover() error {
	st.setPhase(PhaseDiscover)
	members := map[string]Member{}
	var names []string
	for _, m := range st.r.Cluster.Members() {
		members[m.Name] = m
		if m.Status == "alive" {
			names = append(names, m.Name+"("+string(m.Role)+")")
		}
	}
	add := func(name string, role gossip.Role) error {
		m, ok := members[name]
		switch {
		case !ok:
			return &failure{agent: name, phase: PhaseDiscover, err: fmt.Errorf("not a member of the cluster (alive: %s)", listOrNone(names))}
		case m.Status != "alive":
			return &failure{agent: name, phase: PhaseDiscover, err: fmt.Errorf("member is %s, not alive", m.Status)}
		case role == gossip.RoleSender && !m.Sends(), role == gossip.RoleReceiver && !m.Receives():
			return &failure{agent: name, phase: PhaseDiscover, err: fmt.Errorf("runs as %s, cannot be a %s", m.Role, role)}
		}
		n := &node{m: m, role: role, host: &Host{Name: name, Role: string(role), Iface: m.Iface, NUMANode: m.NUMA}}
		st.nodes[name], st.order = n, append(st.order, n)
		return nil
	}
	for _, s := range st.spec.Senders {
		if err := add(s, gossip.RoleSender); err != nil {
			return err
		}
	}
	for _, rc := range st.spec.Receivers {
		if err := add(rc, gossip.RoleReceiver); err != nil {
			return err
		}
	}
	for _, n := range st.order {
		conn, err := st.r.Dial(n.m)
		if err != nil {
			return &failure{agent: n.m.Name, phase: PhaseDiscover, err: err}
		}
		n.conn, n.c = conn, lineratev1.NewAgentClient(conn)
	}
	return nil
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// describe records what n says of itself; a receiver must name the MAC
// and an address of its data interface, which its senders send to.
func (st *runState) describe(ctx context.Context, n *node) error {
	d, err := unary(ctx, st, "describe", n.c.Describe, &lineratev1.DescribeRequest{})
	if err != nil {
		return err
	}
	n.nic = describeInto(n.host, d)
	if err := leasedElsewhere(heldLeaseOf(d.GetLease())); err != nil {
		return err
	}
	if n.role == gossip.RoleReceiver {
		if !n.nic.present || n.nic.mac == "" {
			return fmt.Errorf("describe: no MAC for its data interface %s", n.m.Iface)
		}
		n.dst = dataAddr(n.nic.dataIPs)
		if !n.dst.IsValid() {
			return fmt.Errorf("describe: its data interface %s has no address to send to", n.host.Iface)
		}
	}
	return nil
}

// dataAddr is the address to send a receiver's flows to: its first IPv4
// data address, or its first address when it has no IPv4 one.
func dataAddr(ips []netip.Addr) netip.Addr {
	var dst netip.Addr
	for _, a := range ips {
		if !dst.IsValid() || a.Is4() && !dst.Is4() {
			dst = a
		}
	}
	return dst
}
