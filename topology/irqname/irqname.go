package irqname

import (
	"cmp"
	"fmt"
	"slices"
)

// Device identifies the NIC whose vectors are being classified.
type Device struct {
	Iface     string // netdev name, e.g. "eth0", "ens1f0np0"
	Driver    string // basename of device/driver, e.g. "mlx5_core", "i40e", "virtio_net", "bnxt_en", "gve", "hns3"; may be ""
	BDF       string // PCI address of the function, e.g. "0000:3b:00.0"; may be ""
	VirtioDev string // for virtio NICs, the virtio device name, e.g. "virtio2"; else ""
}

// label names the device in reasons.
func (d Device) label() string {
	switch {
	case d.Iface != "":
		return d.Iface
	case d.VirtioDev != "":
		return d.VirtioDev
	case d.BDF != "":
		return d.BDF
	}
	return "this device"
}

// Kind says what a vector is used for.
type Kind int

const (
	Unknown Kind = iota // not recognised as belonging to this NIC
	Queue               // a per-queue data vector
	Control             // misc/async/mgmt/config/ctrl/fdir/mailbox vector of this NIC
	Shared              // one vector shared by all queues (virtio "virtqueues"): cannot be pinned per queue
)

func (k Kind) String() string {
	switch k {
	case Unknown:
		return "unknown"
	case Queue:
		return "queue"
	case Control:
		return "control"
	case Shared:
		return "shared"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// preference orders the kinds when a vector has several action names.
func (k Kind) preference() int {
	switch k {
	case Queue:
		return 3
	case Shared:
		return 2
	case Control:
		return 1
	}
	return 0
}

// Dir is the direction of a queue vector.
type Dir string

const (
	TxRx Dir = "txrx"
	Rx   Dir = "rx"
	Tx   Dir = "tx"
)

// order is the sort order of directions: txrx, rx, tx.
func (d Dir) order() int {
	switch d {
	case TxRx:
		return 0
	case Rx:
		return 1
	case Tx:
		return 2
	}
	return 3
}

// Vector is one IRQ with its action names.
type Vector struct {
	IRQ   int
	Names []string
}

// Match is the classification of one vector.
type Match struct {
	IRQ    int
	Name   string // the action name that matched (or the first name / "" when none)
	Kind   Kind
	Family string // pattern family: "mlx5", "mlx4", "intel", "txrx", "split", "ena", "gve", "virtio", "sfc", "hns3", "fp", "rxtx", "mana"; "" when Unknown
	Queue  int    // queue index after driver-specific renumbering; -1 unless Kind == Queue
	Dir    Dir    // "" unless Kind == Queue
	Reason string // for Control/Shared/Unknown: a short human reason
}

const reasonNoName = "no action name (interface down?)"

// Classify classifies a set of vectors of one device. It returns one Match
// per input vector, sorted by (Kind==Queue first, then Queue index, then Dir
// order txrx, rx, tx, then IRQ), and applies the quirks that need the whole
// set (see the package documentation).
//
// When a vector has several action names, the first name that classifies as
// Queue wins, else the first Shared, else the first Control, else the first
// name's Unknown result.
func Classify(d Device, vecs []Vector) []Match {
	m := matcherFor(d)
	out := make([]Match, 0, len(vecs))
	for _, v := range vecs {
		out = append(out, m.classify(v))
	}
	renumber(d, out)
	slices.SortStableFunc(out, compareMatches)
	return out
}

// MatchName classifies a single action name without set-wide quirks: Queue
// is the number parsed from the name, and gve blocks report Dir TxRx because
// their direction depends on the number of blocks. It is meant for the
// /proc/interrupts fallback, which must decide whether a line belongs to the
// NIC at all. The returned IRQ is 0.
func MatchName(d Device, name string) Match {
	if name == "" {
		return unknown("", reasonNoName)
	}
	return matcherFor(d).match(name)
}

func (m *matcher) classify(v Vector) Match {
	best, found := Match{}, false
	for _, name := range v.Names {
		if name == "" {
			continue
		}
		r := m.match(name)
		if !found || r.Kind.preference() > best.Kind.preference() {
			best, found = r, true
		}
	}
	if !found {
		best = unknown("", reasonNoName)
	}
	best.IRQ = v.IRQ
	return best
}

func unknown(name, reason string) Match {
	return Match{Name: name, Kind: Unknown, Queue: -1, Reason: reason}
}

func compareMatches(a, b Match) int {
	aq, bq := a.Kind == Queue, b.Kind == Queue
	switch {
	case aq && !bq:
		return -1
	case bq && !aq:
		return 1
	case aq:
		if c := cmp.Compare(a.Queue, b.Queue); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Dir.order(), b.Dir.order()); c != 0 {
			return c
		}
	}
	return cmp.Compare(a.IRQ, b.IRQ)
}
