package agent

import (
	"time"

	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
	"github.com/linerate/linerate/topology"
)

// The answers of the calls that change what an agent does, from what its
// service returned (the lease's are in convert_lease.go).

// releasedToProto is a release's answer: what restoring the tuning
// changed, and warnings.
func releasedToProto(r restored) *lineratev1.ReleaseLeaseResponse {
	return &lineratev1.ReleaseLeaseResponse{Changes: changesToProto(r.changes), Warnings: r.warnings, Settings: restoredSettingsToProto(r.settings)}
}

// restoredSettingsToProto is what a restore did to each fixed setting.
func restoredSettingsToProto(ss []topology.SettingChange) []*lineratev1.RestoredSetting {
	var out []*lineratev1.RestoredSetting
	for _, s := range ss {
		out = append(out, &lineratev1.RestoredSetting{Kind: string(s.Kind), Key: s.Key, Status: s.Status, Note: s.Note})
	}
	return out
}

// restoredToProto is a restore's answer on iface.
func restoredToProto(iface string, r restored) *lineratev1.RestoreResponse {
	return &lineratev1.RestoreResponse{Iface: iface, Changes: changesToProto(r.changes), Warnings: r.warnings, Settings: restoredSettingsToProto(r.settings)}
}

// armedToProto is an arm's answer: the method counting, why, and since
// when.
func armedToProto(a armedInfo) *lineratev1.ArmResponse {
	return &lineratev1.ArmResponse{Armed: true, Method: string(a.method), MethodReason: a.why, XdpMode: a.xdpMode, ArmedAt: ts(a.at)}
}

// configuredToProto is a configure's answer: the backend chosen and the
// configuration as the agent completed it.
func configuredToProto(c *configured) *lineratev1.ConfigureResponse {
	name := c.backend.Name()
	return &lineratev1.ConfigureResponse{Accepted: true, Backend: string(name), Config: senderConfigToProto(&c.cfg, name), Warnings: c.warnings}
}

// startedToProto is a start's answer: when the send was handed its
// instant.
func startedToProto(at time.Time) *lineratev1.StartResponse {
	return &lineratev1.StartResponse{StartedAt: ts(at)}
}

// stoppedToProto is a stop's answer: whether a send was stopped, and
// when.
func stoppedToProto(stopped bool, at time.Time) *lineratev1.StopResponse {
	return &lineratev1.StopResponse{Stopped: stopped, StoppedAt: ts(at)}
}
