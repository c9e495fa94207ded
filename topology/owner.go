package topology

import (
	"errors"
	"fmt"
)

// OwnerIRQApply is the owner of the journals `linerate irq apply` writes.
const OwnerIRQApply = "irq apply"

// OwnerDoctor is the owner of the journals `linerate doctor --fix` writes.
const OwnerDoctor = "doctor"

// ErrJournalOwner is an Apply onto a journal another owner wrote: the
// originals it holds are that owner's to restore.
var ErrJournalOwner = errors.New("the journal belongs to another owner")

// AgentOwner is the owner of the journals of the agent named name on its
// data interface iface: "agent:<name>:<iface>".
func AgentOwner(name, iface string) string { return "agent:" + name + ":" + iface }

// ownedBy tells whether owner may restore or extend j: a journal of the
// same owner, or one without an owner (written before journals had one,
// taken as the asker's), or any journal when owner is "" (an operator's
// explicit restore).
func (j *Journal) ownedBy(owner string) bool {
	return owner == "" || j.Owner == "" || j.Owner == owner
}

// ownerName is j's owner as messages name it.
func (j *Journal) ownerName() string {
	if j.Owner == "" {
		return "no owner (written before journals had one)"
	}
	return fmt.Sprintf("%q", j.Owner)
}
