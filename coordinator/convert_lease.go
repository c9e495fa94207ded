package coordinator

import lineratev1 "github.com/linerate/linerate/proto/linerate/v1"

// heldLeaseOf is the lease a Describe shows (nil: the agent is free).
func heldLeaseOf(l *lineratev1.LeaseInfo) *heldLease {
	if l == nil {
		return nil
	}
	return &heldLease{holder: l.Holder, coordinatorID: l.CoordinatorId, expires: l.GetExpiresAt().AsTime()}
}
