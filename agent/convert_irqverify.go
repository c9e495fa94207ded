package agent

import (
	"strconv"

	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
	"github.com/linerate/linerate/topology"
)

// irqVerifyToProto is a verification as the wire carries it.
func irqVerifyToProto(v *topology.VerifyResult) *lineratev1.IrqVerify {
	if v == nil {
		return nil
	}
	p := &lineratev1.IrqVerify{Iface: v.Iface, Interval: v.Interval, OffCpu: int32(v.OffCPU)}
	for _, q := range v.IRQs {
		fired := make(map[int32]uint64, len(q.Fired))
		for c, n := range q.Fired {
			if cpu, err := strconv.Atoi(c); err == nil { // topology writes CPU numbers
				fired[int32(cpu)] = n
			}
		}
		p.Irqs = append(p.Irqs, &lineratev1.VerifiedIrq{
			Irq: int32(q.IRQ), Name: q.Name, Queue: int32(q.Queue), Planned: q.Planned, Source: q.Source,
			Fired: fired, Total: q.Total, OffCpu: q.OffCPU, Note: q.Note,
		})
	}
	return p
}
