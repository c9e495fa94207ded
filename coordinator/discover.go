package coordinator

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/linerate/linerate/internal/cluster/gossip"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// discover finds every named agent alive in the cluster with a role that
// fits what the run's flows make it do (roleIn: a sender, a receiver, or
// both in a run that turns flows round), and dials it.
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
	add := func(name string) error {
		m, ok := members[name]
		role := roleIn(st.pairs, name)
		switch {
		case !ok:
			return &failure{agent: name, phase: PhaseDiscover, err: fmt.Errorf("not a member of the cluster (alive: %s)", listOrNone(names))}
		case m.Status != "alive":
			return &failure{agent: name, phase: PhaseDiscover, err: fmt.Errorf("member is %s, not alive", m.Status)}
		}
		if why := cannotBe(m.Role, role, &st.spec); why != "" {
			return &failure{agent: name, phase: PhaseDiscover, err: errors.New(why)}
		}
		n := &node{m: m, role: role, host: &Host{Name: name, Role: string(role), Iface: m.Iface, NUMANode: m.NUMA}}
		st.nodes[name], st.order = n, append(st.order, n)
		return nil
	}
	for _, name := range append(append([]string(nil), st.spec.Senders...), st.spec.Receivers...) {
		if err := add(name); err != nil {
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
	if err := canBoth(n.role, d); err != nil {
		return err
	}
	if n.role.Receives() {
		if !n.nic.present || n.nic.mac == "" {
			return fmt.Errorf("describe: no MAC for its data interface %s", n.m.Iface)
		}
		n.dst = dataAddr(n.nic.dataIPs, st.spec.IPv6)
		if !n.dst.IsValid() {
			return st.spec.noDataAddr(n.host.Iface)
		}
	}
	return nil
}

// canBoth refuses, before any lease, a host the run makes both a sender
// and a receiver (--bidir) whose Describe offers no sender backend or no
// receiver method: it could play only one of its parts.
func canBoth(role gossip.Role, d *lineratev1.DescribeResponse) error {
	if role != gossip.RoleBoth {
		return nil
	}
	switch {
	case len(d.GetBackends()) == 0:
		return fmt.Errorf("describe: offers no sender backend (none of kernel pktgen, xdp or afpacket runs on it), so it cannot be both a sender and a receiver, as --bidir makes every host")
	case len(d.GetReceiverMethods()) == 0:
		return fmt.Errorf("describe: offers no receiver method (neither xdp nor afpacket can count on it), so it cannot be both a sender and a receiver, as --bidir makes every host")
	}
	return nil
}
