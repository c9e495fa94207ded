package agent

import lineratev1 "github.com/linerate/linerate/proto/linerate/v1"

// leaseToProto is the lease as Describe and Watch show it: its holder's
// certificate name, coordinator_id, generation and expiry, never its id.
func leaseToProto(h holderInfo) *lineratev1.LeaseInfo {
	return &lineratev1.LeaseInfo{CoordinatorId: h.coordinator, Holder: h.holder, Generation: h.gen, ExpiresAt: ts(h.expires)}
}
