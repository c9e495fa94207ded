package coordinator

import (
	"github.com/linerate/linerate/doctor"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
	"github.com/linerate/linerate/topology"
)

// checksInto records an agent's checks and facts in h; checks that could
// not run are a warning of h.
func checksInto(h *Host, d *lineratev1.DescribeResponse) {
	h.Checks = checksOf(d)
	if f := d.GetFacts(); f != nil {
		h.Facts = &doctor.Facts{
			CPUModel: f.CpuModel, Microcode: f.Microcode, Governor: f.Governor, Rings: f.Rings,
			Coalesce: f.Coalesce, Pause: f.Pause, Offloads: f.Offloads, Firmware: f.Firmware,
		}
	}
	if d.GetChecksError() != "" {
		h.Warnings = append(h.Warnings, "its checks could not run: "+d.ChecksError)
	}
}

// checksOf are a Describe's checks, in its order.
func checksOf(d *lineratev1.DescribeResponse) []doctor.Check {
	var out []doctor.Check
	for _, c := range d.GetChecks() {
		out = append(out, doctor.Check{
			ID: c.Id, Title: c.Title, Status: doctor.Status(c.Status), Evidence: c.Evidence, Why: c.Why,
			Fix: c.Fix, FixClass: doctor.FixClass(c.FixClass), Volatile: c.Volatile,
		})
	}
	return out
}

// fixedInto records what a Tune's fixes changed in h.
func fixedInto(h *Host, t *lineratev1.TuneResponse) {
	for _, f := range t.GetFixed() {
		s := topology.Setting{Kind: topology.SettingKind(f.Kind), Key: f.Key, Original: f.From, Applied: f.To, Class: f.Class}
		h.Fixed = append(h.Fixed, doctor.Applied{Class: doctor.FixClass(f.Class), Setting: s, From: f.From, To: f.To})
	}
}
