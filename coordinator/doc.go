// Package coordinator discovers agents, plans a run, drives every agent
// through it and reconciles what was sent with what arrived. This file set
// holds the reconciliation: pure arithmetic over the agents' reports, so
// that the numbers can be tested to the packet.
package coordinator
