package agent

// The inverse of convert.go's changesToProto: only the round-trip test
// needs it (the coordinator keeps no IRQ changes), so it lives here. The
// reports an agent sends are decoded by the coordinator's own converter
// (coordinator/convert.go); here they are checked field by field.

import (
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
	"github.com/linerate/linerate/topology"
)

func changesFromProto(ps []*lineratev1.IrqChange) []topology.Change {
	var out []topology.Change
	for _, p := range ps {
		out = append(out, topology.Change{
			IRQ: int(p.Irq), Name: p.Name, Queue: int(p.Queue), From: p.From, To: p.To,
			ReadBack: p.ReadBack, Effective: p.Effective, Status: p.Status, Note: p.Note,
		})
	}
	return out
}
