package agent

import (
	"context"
	"fmt"

	"github.com/linerate/linerate/internal/cluster/mtls"
)

// caller is who makes a call: the verified client certificate's name,
// which is the identity a lease is bound to, and where the call came from.
// Under --insecure there is no certificate and no identity (name ""):
// anyone who reaches the port is trusted, and only the coordinator_id
// given at AcquireLease tells holders apart.
type caller struct {
	name string // the client certificate's common name; "" without TLS
	addr string // the peer's address
}

// callerOf is the caller of a gRPC call (ctx is the handler's).
func callerOf(ctx context.Context) caller {
	p, err := mtls.PeerFromContext(ctx)
	if err != nil {
		return caller{addr: p.Addr}
	}
	return caller{name: p.Name, addr: p.Addr}
}

// insecureLeaseWarning is logged at every start under --insecure.
const insecureLeaseWarning = "leases have no identity under --insecure: the coordinator_id a caller gives is all that tells lease holders apart, and any caller with the lease id may use the lease"

// noIdentity is what stands for the caller's name when it has none.
const noIdentity = "no identity: --insecure"

// display is the caller as logs and refusals name it.
func (c caller) display() string {
	if c.name == "" {
		return noIdentity
	}
	return fmt.Sprintf("certificate %q", c.name)
}

// describeHolder names the holder of c as a refused caller reads it: its
// certificate name and the coordinator_id it gave (never the lease id).
func describeHolder(c *lease) string {
	if c.holder == "" {
		return fmt.Sprintf("coordinator_id %q (%s)", c.coordinator, noIdentity)
	}
	return fmt.Sprintf("certificate %q (coordinator_id %q)", c.holder, c.coordinator)
}

// sameIdentityNote explains a refusal to the holder's own identity asking
// with another coordinator_id.
func sameIdentityNote(c *lease, who caller) string {
	if c.holder == "" || c.holder != who.name {
		return ""
	}
	return fmt.Sprintf(": another run of the same certificate holds it (only coordinator_id %q may acquire it again); release it or wait for it to expire", c.coordinator)
}
