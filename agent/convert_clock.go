package agent

import lineratev1 "github.com/linerate/linerate/proto/linerate/v1"

// clockToProto is the host's clock discipline as Describe carries it; an
// unreadable one is not synchronised and says why.
func clockToProto(c clockInfo) *lineratev1.Clock {
	p := &lineratev1.Clock{Synchronised: c.synchronised, EstErrorUs: c.estErrorUS, MaxErrorUs: c.maxErrorUS,
		State: c.state, Status: c.status, BootId: c.bootID}
	if c.err != nil {
		p.Synchronised, p.Error = false, c.err.Error()
	}
	return p
}
