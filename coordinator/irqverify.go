package coordinator

import (
	"fmt"
	"strings"

	"github.com/linerate/linerate/topology"
)

// verifiedInto records in n's host where its queue IRQs fired (v), or
// why the host has no such record: a NIC without queue IRQs (the reason
// its tuning was skipped for), the agent's own reason, or an agent that
// predates irq_verify.
func verifiedInto(n *node, v *topology.VerifyResult, reason string) {
	h := n.host
	switch {
	case v != nil:
		h.IRQVerify, h.IRQVerifyReason = v, ""
	case !n.nic.queueIRQs:
		h.IRQVerifyReason = topology.NoQueueIRQs
	case reason != "":
		h.IRQVerifyReason = reason
	default:
		h.IRQVerifyReason = "not verified: the agent did not report where its queue IRQs fired (it predates irq_verify)"
	}
}

// offCPUWarning is the run's warning for a host whose queue IRQs fired
// off their planned CPUs, naming each such IRQ ("" when none did).
func offCPUWarning(h *Host) string {
	v := h.IRQVerify
	if v == nil || v.OffCPU == 0 {
		return ""
	}
	var irqs []string
	for _, q := range v.IRQs {
		if q.OffCPU {
			irqs = append(irqs, fmt.Sprintf("irq %d (%s, queue %d) planned on CPU %s fired on %s", q.IRQ, q.Name, q.Queue, q.Planned, q.FiredOn()))
		}
	}
	return fmt.Sprintf("%s: %d queue IRQs of %s fired off their planned CPUs: %s", h.Name, v.OffCPU, v.Iface, strings.Join(irqs, "; "))
}
