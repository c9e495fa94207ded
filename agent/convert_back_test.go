package agent

// The inverses of convert.go's mappings: only the round-trip tests need
// them (the coordinator works with the protos), so they live here.

import (
	"fmt"
	"net/netip"

	"github.com/linerate/linerate/pktgen"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
	"github.com/linerate/linerate/receiver"
	"github.com/linerate/linerate/topology"
)

func summaryFromProto(p *lineratev1.SenderSummary) *pktgen.Summary {
	if p == nil {
		return nil
	}
	s := &pktgen.Summary{
		Backend: p.Backend, Device: p.Device, Packets: p.Packets, Errors: p.Errors, USec: p.Usec, PPS: p.Pps,
		L2BPS: p.L2Bps, L1BPS: p.L1Bps, FrameBytes: p.FrameBytes, Warnings: p.Warnings, Interrupted: p.Interrupted,
	}
	for _, t := range p.Threads {
		s.Threads = append(s.Threads, pktgen.ThreadSummary{
			CPU: int(t.Cpu), Entry: t.Entry, Src: t.Src, Packets: t.Packets, Errors: t.Errors, USec: t.Usec, PPS: t.Pps,
			FirstFrameNs: t.FirstFrameUnixNs,
		})
	}
	return s
}

func reportFromProto(p *lineratev1.ReceiverReport) (*receiver.Report, error) {
	if p == nil {
		return nil, nil
	}
	r := &receiver.Report{
		Method: receiver.Method(p.Method), MethodReason: p.MethodReason, XDPMode: p.XdpMode, Packets: p.Packets, OtherPackets: p.OtherPackets,
		RingDrops: p.RingDrops, OverflowPackets: p.OverflowPackets, Window: p.Window,
	}
	if l := p.Link; l != nil {
		r.Link = receiver.LinkCounters{
			RxPackets: l.RxPackets, RxDropped: l.RxDropped, RxMissed: l.RxMissed, RxFifo: l.RxFifo,
			XDPPackets: l.XdpPackets, XDPDrops: l.XdpDrops,
		}
	}
	for i, s := range p.Streams {
		src, err := netip.ParseAddr(s.Src)
		if err != nil {
			return nil, fmt.Errorf("streams[%d].src %q: %w", i, s.Src, err)
		}
		dst, err := netip.ParseAddr(s.Dst)
		if err != nil {
			return nil, fmt.Errorf("streams[%d].dst %q: %w", i, s.Dst, err)
		}
		rs := receiver.StreamReport{
			Src: src, Dst: dst, DstPort: uint16(s.DstPort), Received: s.Received, MaxSeq: s.MaxSeq,
			Duplicates: s.Duplicates, Reordered: s.Reordered, Missing: s.Missing, BeyondCapacity: s.BeyondCapacity,
			Late: s.Late, Unrecorded: s.Unrecorded, MissingRangesFrom: s.MissingRangesFrom,
			FirstArrivalNs: s.FirstArrivalUnixNs,
		}
		for _, m := range s.MissingRanges {
			rs.MissingRanges = append(rs.MissingRanges, [2]uint64{m.From, m.To})
		}
		r.Streams = append(r.Streams, rs)
	}
	return r, nil
}

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
