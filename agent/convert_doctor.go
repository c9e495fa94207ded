package agent

import (
	"net/netip"

	"github.com/linerate/linerate/doctor"
	"github.com/linerate/linerate/pktgen"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
	"github.com/linerate/linerate/receiver"
	"github.com/linerate/linerate/topology"
)

// checkOptionsFromProto is what a Describe asks the host's checks to be
// for; every field absent is the checks' default. A bad option is refused
// naming it and what would be valid (doctor.Options.Check).
func checkOptionsFromProto(req *lineratev1.DescribeRequest) (doctor.Options, error) {
	o := doctor.Options{
		FrameSize: int(req.FrameSize), CPUs: ints(req.Cpus), Role: doctor.Role(req.Role), IRQBalance: topology.IRQBalance(req.Irqbalance),
		Backend: pktgen.BackendName(req.Backend), Method: receiver.Method(req.Method), OneClock: req.OneClock,
	}
	if err := o.Check(); err != nil {
		return o, failf(ErrInvalid, "%w", err)
	}
	var err error
	o.Addrs, err = addrsFromProto(req.Addrs)
	return o, err
}

// addrsFromProto parses a request's test addresses.
func addrsFromProto(ss []string) ([]netip.Addr, error) {
	var out []netip.Addr
	for i, s := range ss {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, failf(ErrInvalid, "addrs[%d] %q: want an IPv4 or IPv6 address", i, s)
		}
		out = append(out, a)
	}
	return out, nil
}

// fixClassesFromProto parses a Tune's fix classes, each one of
// doctor.FixClasses.
func fixClassesFromProto(ss []string) ([]doctor.FixClass, error) {
	var out []doctor.FixClass
	for i, s := range ss {
		c := doctor.FixClass(s)
		if err := c.Check(); err != nil {
			return nil, failf(ErrInvalid, "fix_classes[%d] %v", i, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// checksToProto is a report's checks and facts (none: nil report).
func checksToProto(r *doctor.Report) ([]*lineratev1.HostCheck, *lineratev1.HostFacts) {
	if r == nil {
		return nil, nil
	}
	out := make([]*lineratev1.HostCheck, 0, len(r.Checks))
	for _, c := range r.Checks {
		out = append(out, &lineratev1.HostCheck{
			Id: c.ID, Title: c.Title, Status: string(c.Status), Evidence: c.Evidence, Why: c.Why,
			Fix: c.Fix, FixClass: string(c.FixClass), Volatile: c.Volatile,
		})
	}
	f := r.Facts
	return out, &lineratev1.HostFacts{
		CpuModel: f.CPUModel, Microcode: f.Microcode, Governor: f.Governor, Rings: f.Rings,
		Coalesce: f.Coalesce, Pause: f.Pause, Offloads: f.Offloads, Firmware: f.Firmware,
	}
}

// fixedToProto is what a Tune's fixes changed.
func fixedToProto(fixed []doctor.Applied) []*lineratev1.HostFix {
	var out []*lineratev1.HostFix
	for _, a := range fixed {
		out = append(out, &lineratev1.HostFix{Class: string(a.Class), Kind: string(a.Setting.Kind), Key: a.Setting.Key, From: a.From, To: a.To})
	}
	return out
}
