package doctor

import (
	"context"
	"fmt"
)

// checker is one check: it reads its evidence through env and judges.
type checker struct {
	id  string
	run func(*env) Check
}

// checks are every check, in the order a report lists them.
var checks = []checker{
	{"irqbalance", checkIRQBalance},
	{"steering", checkSteering},
	{"governor", checkGovernor},
	{"idle", checkIdle},
	{"smt", checkSMT},
	{"numa", checkNUMA},
	{"flow-control", checkPause},
	{"coalescing", checkCoalesce},
	{"rings", checkRings},
	{"offloads", checkOffloads},
	{"link", checkLink},
	{"mtu", checkMTU},
	{"conntrack", checkConntrack},
	{"firewall", checkFirewall},
	{"kernel", checkKernel},
	{"clock", checkClock},
}

// IDs lists every check's id, in report order.
func IDs() []string {
	out := make([]string, len(checks))
	for i, c := range checks {
		out[i] = c.id
	}
	return out
}

// Run makes every check of h for the run o describes. Only a bad option
// or a missing interface is an error; a check that cannot read its
// evidence says so in its verdict.
func Run(ctx context.Context, h Host, o Options) (*Report, error) {
	e, err := newEnv(h, o)
	if err != nil {
		return nil, err
	}
	defer e.close()
	rep := &Report{Host: o.Host, Iface: o.Iface, Role: e.o.Role, FrameSize: o.FrameSize, CPUs: e.cpus.CPUs(), Checks: []Check{}}
	for _, c := range checks {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("doctor %s: %w", o.Iface, err)
		}
		ch := c.run(e)
		ch.ID = c.id
		if ch.Evidence == nil {
			ch.Evidence = []string{}
		}
		accept(&ch, o.Known)
		rep.Checks = append(rep.Checks, ch)
	}
	rep.Facts = facts(e)
	return rep, nil
}
