// Package lab builds linerate's one-machine testbed: hosts made of network
// namespaces, joined through veth pairs to a "switch" namespace, with
// programs on the switch ports that pass traffic or lose a known part of
// it and count what they dropped — a lossy switch whose own counter is the
// truth. Addresses come from 198.18.0.0/15 only.
//
// It holds the whole lab lifecycle; cmd/linerate passes options in and
// gets typed results out:
//
//   - [Up] builds the namespaces, links, bridges, port programs ([Loss],
//     [AttachPort]) and shaper a [Spec] describes; [Lab.Down] removes them.
//   - [Lab.StartAgents] issues the lab's certificates and gossip key into
//     its directory ([DefaultDir]) and starts one `linerate agent` per host
//     in its namespace.
//   - [Open] does both and joins the agents' cluster as the coordinator,
//     returning a [Session] once every agent is alive; [Session.Measure]
//     performs a run and sets its Result.Lab to what the switch counted
//     meanwhile ([Lab.Truth], a coordinator.PathTruth); [Session.Close]
//     stops the agents and removes the lab.
//   - [RemoveLab] (`linerate lab down`) removes what a killed lab left:
//     namespaces, the management link, agent processes, the directory;
//     [Remains] lists what is still there.
//
// Privileges: root (network namespaces, XDP on the switch ports, tbf
// qdiscs); the kernel needs veth, bridges, XDP (native on veth) and tbf.
// Linux only: elsewhere the package is empty.
package lab
