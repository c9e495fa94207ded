package doctor

import (
	"fmt"
	"slices"

	"github.com/linerate/linerate/internal/enum"
)

// Status is a check's verdict.
type Status string

// Verdicts, in order of severity. Known is a WARN its host's operator
// accepted as known (Options.Known): shown with its evidence and why it
// is known, and no warning of a run (Warns).
const (
	Pass  Status = "PASS"
	Known Status = "KNOWN"
	Warn  Status = "WARN"
	Fail  Status = "FAIL"
)

// Warns is the one rule of what a check's verdict asks of a person: a
// WARN or a FAIL is something to act on, a warning of the run it was
// read for; a PASS or a KNOWN (a WARN the host's operator accepted) is
// not.
func (s Status) Warns() bool { return s == Warn || s == Fail }

func (s Status) rank() int {
	switch s {
	case Warn:
		return 1
	case Fail:
		return 2
	}
	return 0
}

// Worse is the more severe of s and o.
func (s Status) Worse(o Status) Status {
	if o.rank() > s.rank() {
		return o
	}
	return s
}

// Role is the part the host plays in the run the checks are for.
type Role string

// Roles.
const (
	RoleSender   Role = "sender"
	RoleReceiver Role = "receiver"
	RoleBoth     Role = "both"
)

// Roles lists every valid role.
var Roles = []Role{RoleSender, RoleReceiver, RoleBoth}

// Check is nil when r is one of Roles.
func (r Role) Check() error {
	if slices.Contains(Roles, r) {
		return nil
	}
	return fmt.Errorf("%q: valid roles are %s", r, enum.And(Roles))
}

func (r Role) sends() bool    { return r == RoleSender || r == RoleBoth }
func (r Role) receives() bool { return r == RoleReceiver || r == RoleBoth }

// Check is one check's verdict on one host.
type Check struct {
	// ID names the check ("irqbalance", "flow-control", ...): the key a
	// report, a fingerprint and a re-read after the traffic match on.
	ID string `json:"id"`
	// Title is what is checked, for a person.
	Title  string `json:"title"`
	Status Status `json:"status"`
	// Evidence is what was read, each item naming where it was read
	// ("/sys/class/net/eth1/mtu: 1500").
	Evidence []string `json:"evidence"`
	// Why it matters for a benchmark.
	Why string `json:"why"`
	// Fix is the exact fix (a command or a file to edit); "" on a PASS.
	Fix string `json:"fix,omitempty"`
	// FixClass is the --fix class that applies Fix; "" when doctor cannot
	// apply it (the operator must).
	FixClass FixClass `json:"fix_class,omitempty"`
	// Volatile checks can change during a run (irqbalance moving an IRQ
	// back, a governor daemon): a run reads them again after the traffic.
	Volatile bool `json:"volatile,omitempty"`
}

// Report is every check on one host.
type Report struct {
	Host      string  `json:"host,omitempty"`
	Iface     string  `json:"iface"`
	Role      Role    `json:"role"`
	FrameSize int     `json:"frame_size,omitempty"`
	CPUs      []int   `json:"cpus"` // the CPUs the checks were made for
	Checks    []Check `json:"checks"`
	// Facts are the settings the checks read, for the host fingerprint.
	Facts Facts `json:"facts"`
}

// Worst is the most severe verdict of the report (PASS when empty).
func (r Report) Worst() Status {
	s := Pass
	for _, c := range r.Checks {
		s = s.Worse(c.Status)
	}
	return s
}

// Count is how many checks have status s.
func (r Report) Count(s Status) int {
	n := 0
	for _, c := range r.Checks {
		if c.Status == s {
			n++
		}
	}
	return n
}

// Find is the check of that id, or nil.
func (r *Report) Find(id string) *Check {
	for i := range r.Checks {
		if r.Checks[i].ID == id {
			return &r.Checks[i]
		}
	}
	return nil
}

// Facts are the host settings the checks read, the part of a host's
// fingerprint that changes a benchmark's number without changing its
// hardware. Each is a short text ("" when not read).
type Facts struct {
	CPUModel  string `json:"cpu_model,omitempty"`
	Microcode string `json:"microcode,omitempty"`
	Governor  string `json:"governor,omitempty"`
	Rings     string `json:"rings,omitempty"`
	Coalesce  string `json:"coalesce,omitempty"`
	Pause     string `json:"pause,omitempty"`
	Offloads  string `json:"offloads,omitempty"`
	Firmware  string `json:"firmware,omitempty"`
}
