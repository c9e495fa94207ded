package agent

import (
	"google.golang.org/protobuf/types/known/durationpb"

	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// leaseToProto is the lease as Describe and Watch show it: its holder's
// certificate name, coordinator_id, generation and expiry, never its id.
func leaseToProto(h holderInfo) *lineratev1.LeaseInfo {
	return &lineratev1.LeaseInfo{CoordinatorId: h.coordinator, Holder: h.holder, Generation: h.gen, ExpiresAt: ts(h.expires)}
}

// acquiredToProto is an acquire's answer: the lease's id, expiry and TTL.
func acquiredToProto(g grant) *lineratev1.AcquireLeaseResponse {
	return &lineratev1.AcquireLeaseResponse{LeaseId: g.id, ExpiresAt: ts(g.expires), Ttl: durationpb.New(g.ttl)}
}

// renewedToProto is a renewal's answer: the lease's new expiry and TTL.
func renewedToProto(g grant) *lineratev1.RenewLeaseResponse {
	return &lineratev1.RenewLeaseResponse{ExpiresAt: ts(g.expires), Ttl: durationpb.New(g.ttl)}
}
