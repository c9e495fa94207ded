package coordinator

import (
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/linerate/linerate/pktgen"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

func TestDescribeThenTune(t *testing.T) {
	h := &Host{Name: "r1"}
	f := describeInto(h, &lineratev1.DescribeResponse{Kernel: "6.1", Nic: &lineratev1.Nic{
		Iface: "eth1", Driver: "i40e", NumaNode: 1, LinkSpeedMbps: 10000, Firmware: "9.2", Model: "8086:1572", Pci: "0000:3b:00.0",
		Mac: "02:00:00:00:01:01", DataIps: []string{"fe80::1", "not an address", "198.18.0.101"}, LocalCpus: []int32{1, 3},
		Queues:  []*lineratev1.NicQueue{{Queue: 0, Irq: 0}, {Queue: 1, Irq: 88}},
		Skipped: []*lineratev1.SkippedIrq{{Irq: 90, Name: "i40e-misc", Reason: "not a queue"}},
	}})
	if h.Kernel != "6.1" || h.Iface != "eth1" || h.Driver != "i40e" || h.NUMANode != 1 || h.LinkSpeedMbps != 10000 ||
		h.Firmware != "9.2" || h.Model != "8086:1572" || h.PCI != "0000:3b:00.0" || len(h.SkippedIRQs) != 1 || h.SkippedIRQs[0].IRQ != 90 {
		t.Errorf("host after Describe: %+v", h)
	}
	if !f.present || f.mac != "02:00:00:00:01:01" || len(f.dataIPs) != 2 || !slices.Equal(f.localCPUs, []int{1, 3}) || !f.queueIRQs {
		t.Errorf("nic facts: %+v", f)
	}
	if a := dataAddr(f.dataIPs); a != netip.MustParseAddr("198.18.0.101") {
		t.Errorf("data address %s, want the IPv4 one", a)
	}
	if a := dataAddr([]netip.Addr{netip.MustParseAddr("2001:db8::1")}); a.String() != "2001:db8::1" {
		t.Errorf("IPv6 only: data address %s", a)
	}
	tunedInto(h, &lineratev1.TuneResponse{NumaNode: 0, IrqMap: []*lineratev1.IrqMapping{{Queue: 1, Irq: 88, Cpu: 3, Name: "i40e-eth1-TxRx-1", Dir: "txrx"}},
		Managed: []*lineratev1.IrqMapping{{Queue: 2, Irq: 89, Cpu: 5}}, Warnings: []string{"irqbalance"}})
	if h.NUMANode != 0 || len(h.IRQMap) != 1 || h.IRQMap[0] != (IRQPin{Queue: 1, IRQ: 88, CPU: 3, Name: "i40e-eth1-TxRx-1", Dir: "txrx"}) ||
		len(h.ManagedIRQs) != 1 || h.SkippedIRQs != nil || !slices.Equal(h.Warnings, []string{"irqbalance"}) {
		t.Errorf("host after Tune: %+v", h)
	}
	if f := describeInto(&Host{}, &lineratev1.DescribeResponse{}); f.present {
		t.Errorf("no NIC described: %+v", f)
	}
}

func TestReports(t *testing.T) {
	s := senderReportOf(&lineratev1.SenderSummary{Packets: 10, Errors: 1, TxDropped: 2, Pps: 5, Usec: 2_000_000, Backend: "kernel",
		Threads: []*lineratev1.ThreadSummary{{Src: "198.18.0.1", Packets: 10, Errors: 1, Pps: 5}}})
	if s.WindowSec != 2 || s.TxDropped != 2 || len(s.Threads) != 1 || s.Threads[0] != (senderThread{Src: "198.18.0.1", Packets: 10, Errors: 1, PPS: 5}) {
		t.Errorf("sender report %+v", s)
	}
	r := receiverReportOf(&lineratev1.ReceiverReport{Method: "xdp", Packets: 12, OtherPackets: 2, RingDrops: 1,
		Link:    &lineratev1.LinkCounters{RxDropped: 2, RxMissed: 3, RxFifo: 4},
		Streams: []*lineratev1.StreamReport{{Src: "a", Dst: "b", DstPort: 10000, Received: 10, MaxSeq: 11, Missing: 1, MissingRanges: []*lineratev1.SeqRange{{From: 4, To: 4}}}}})
	if r.HostDrops != 10 || r.Packets != 12 || r.OtherPackets != 2 || len(r.Streams) != 1 ||
		r.Streams[0].DstPort != 10000 || !slices.Equal(r.Streams[0].MissingRanges, [][2]uint64{{4, 4}}) {
		t.Errorf("receiver report %+v", r)
	}
	if senderReportOf(nil) != nil || receiverReportOf(nil) != nil {
		t.Error("no summary or report is nil")
	}
}

func TestSenderConfig(t *testing.T) {
	p := sendPlan{
		threads: planThreads([]int{0, 1}, 1, []slot{{2, 0}, {4, 1}}, 100, 1000),
		frame:   60, imix: pktgen.IMIX{{Size: 64, Weight: 7}, {Size: 1518, Weight: 1}}, duration: time.Second, port: 10001, backend: "kernel",
		dst:    endpoint{ip: netip.MustParseAddr("198.18.0.101"), mac: "02:00:00:00:01:01"},
		perDst: []endpoint{{netip.MustParseAddr("198.18.0.101"), "m1"}, {netip.MustParseAddr("198.18.0.102"), "m2"}},
	}
	c := senderConfig(p)
	if c.PktSize != 0 || len(c.Imix) != 2 || c.Imix[1].Size != 1514 || !slices.Equal(c.Cpus, []int32{2, 4}) || !slices.Equal(c.Queues, []int32{0, 1}) ||
		!slices.Equal(c.Counts, []uint64{100, 100}) || !slices.Equal(c.RatesPps, []uint64{1000, 1000}) || c.RatePps != 0 || c.Duration.AsDuration() != time.Second || c.DstMin != "198.18.0.101" ||
		c.UdpDstMin != 10001 || c.UdpDstMax != 10001 || !c.SrcPerThread || len(c.ThreadDst) != 2 || c.ThreadDst[1].Mac != "m2" {
		t.Errorf("sender config %v", c)
	}
	p.imix, p.duration, p.perDst = nil, 0, nil
	if c := senderConfig(p); c.PktSize != 60 || c.Duration != nil || c.ThreadDst != nil {
		t.Errorf("one size, a count, one flow: %v", c)
	}
}
