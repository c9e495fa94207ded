package lab

import "github.com/linerate/linerate/internal/config"

// vmKnownChecks are the known-check key of a VM host's agent.yaml (its
// agent runs with no flag and reads them from there): the
// checks whose WARN a lab guest has on purpose, each with why, so that a
// run's report shows them as KNOWN (with their evidence) and not as
// warnings. Nothing else is accepted: any other WARN of a guest, and any
// FAIL, is a warning as on a real host.
//
//   - link: the guest's data NIC is virtio_net on a tap of the lab's
//     switch bridge. It has no line speed; stating one (qemu's speed=)
//     would make %LINE a fraction of an invented figure.
//   - clock: the guests run no time daemon (under TCG there is no
//     kvmclock or ptp_kvm to follow). The run measures each guest's offset
//     against the coordinator and states every delay's bound.
func vmKnownChecks() config.Setting {
	return config.List("known-check",
		"link=a lab guest's virtio NIC on the lab's switch bridge has no line speed: %LINE has none to be a fraction of (lab --shape sets the path's rate)",
		"clock=a lab guest runs no time daemon: the run measures its clock's offset against the coordinator and states each delay's bound",
	)
}
