package coordinator

import (
	"slices"

	"github.com/linerate/linerate/doctor"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
	"github.com/linerate/linerate/topology"
)

// checksInto records an agent's checks and facts in h; checks that could
// not run are a warning of h.
func checksInto(h *Host, d *lineratev1.DescribeResponse) {
	h.Checks = checksOf(d)
	if f := factsOf(d); f != nil {
		h.Facts = f
	}
	if d.GetChecksError() != "" {
		h.Warnings = append(h.Warnings, "its checks could not run: "+d.ChecksError)
	}
}

// factsOf are a Describe's facts (nil: none).
func factsOf(d *lineratev1.DescribeResponse) *doctor.Facts {
	f := d.GetFacts()
	if f == nil {
		return nil
	}
	return &doctor.Facts{
		CPUModel: f.CpuModel, Microcode: f.Microcode, Governor: f.Governor, Rings: f.Rings,
		Coalesce: f.Coalesce, Pause: f.Pause, Offloads: f.Offloads, Firmware: f.Firmware,
	}
}

// fixesRestored is true when r says every setting in fixed was restored
// (or read its original already); an answer that does not list one (an
// agent that predates the list) is not.
func fixesRestored(fixed []doctor.Applied, r *lineratev1.ReleaseLeaseResponse) bool {
	for _, a := range fixed {
		i := slices.IndexFunc(r.GetSettings(), func(s *lineratev1.RestoredSetting) bool {
			return s.Kind == string(a.Setting.Kind) && s.Key == a.Setting.Key
		})
		if i < 0 || r.Settings[i].Status != topology.StatusRestored && r.Settings[i].Status != topology.StatusUnchanged {
			return false
		}
	}
	return true
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
