package lineratev1_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/linerate/linerate/pktgen"
	pb "github.com/linerate/linerate/proto/linerate/v1"
	"github.com/linerate/linerate/topology"
	"github.com/linerate/linerate/topology/cpuset"
)

// The messages that carry what the CLI prints as JSON use the CLI's field
// names: the JSON of topology and pktgen values reads straight into them
// with protojson (which rejects unknown fields unless the message is meant
// to be a subset), and they print back with the same names under
// protojson's UseProtoNames.
func TestCLIJSONReadsIntoMessages(t *testing.T) {
	cpu := 2
	for _, tc := range []struct {
		name string
		cli  any
		into proto.Message
		want proto.Message
		// subset is set when the message carries some of the CLI's fields only.
		subset bool
	}{
		{"irq show report → Nic", &topology.Report{
			Iface: "eth1", Driver: "ixgbe", PCI: "0000:3b:00.0", NUMANode: 1, LocalCPUs: cpuset.Of(2, 3),
			Queues:   []topology.ReportQueue{{Queue: 0, IRQ: 41, Name: "eth1-TxRx-0", Dir: "txrx", Current: "0-7", Effective: "1", Managed: true}},
			Skipped:  []topology.Skipped{{IRQ: 40, Name: "eth1", Reason: "link/mailbox vector"}},
			Warnings: []string{"w"},
		}, &pb.Nic{}, &pb.Nic{
			Iface: "eth1", Driver: "ixgbe", Pci: "0000:3b:00.0", NumaNode: 1, LocalCpus: []int32{2, 3},
			Queues:   []*pb.NicQueue{{Queue: 0, Irq: 41, Name: "eth1-TxRx-0", Dir: "txrx", Current: "0-7", Effective: "1", Managed: true}},
			Skipped:  []*pb.SkippedIrq{{Irq: 40, Name: "eth1", Reason: "link/mailbox vector"}},
			Warnings: []string{"w"},
		}, false},
		{"irq plan queue → IrqMapping", &topology.ReportQueue{Queue: 1, IRQ: 42, Name: "q1", Dir: "rx", CPU: &cpu, Effective: "2"},
			&pb.IrqMapping{}, &pb.IrqMapping{Queue: 1, Irq: 42, Name: "q1", Dir: "rx", Cpu: 2, Effective: "2"}, true},
		{"irq apply result → TuneResponse", &topology.ApplyResult{
			Iface: "eth1", Journal: "/var/lib/linerate/irq-eth1.json",
			Changes:  []topology.Change{{IRQ: 41, Name: "q0", Queue: 0, From: "0-7", To: "2", ReadBack: "2", Effective: "2", Status: "applied", Note: "n"}},
			Warnings: []string{"w"},
		}, &pb.TuneResponse{}, &pb.TuneResponse{
			Iface: "eth1", Journal: "/var/lib/linerate/irq-eth1.json",
			Changes:  []*pb.IrqChange{{Irq: 41, Name: "q0", Queue: 0, From: "0-7", To: "2", ReadBack: "2", Effective: "2", Status: "applied", Note: "n"}},
			Warnings: []string{"w"},
		}, false},
		{"send summary → SenderSummary", &pktgen.Summary{
			Backend: "kernel", Device: "eth1", Packets: 10, Errors: 1, USec: 1000, PPS: 10000, L2BPS: 5.12e6, L1BPS: 6.72e6, FrameBytes: 60,
			Threads:  []pktgen.ThreadSummary{{CPU: 2, Entry: "eth1@2", Src: "198.18.0.2", Packets: 10, Errors: 1, USec: 1000, PPS: 10000}},
			Warnings: []string{"w"}, Interrupted: true,
		}, &pb.SenderSummary{}, &pb.SenderSummary{
			Backend: "kernel", Device: "eth1", Packets: 10, Errors: 1, Usec: 1000, Pps: 10000, L2Bps: 5.12e6, L1Bps: 6.72e6, FrameBytes: 60,
			Threads:  []*pb.ThreadSummary{{Cpu: 2, Entry: "eth1@2", Src: "198.18.0.2", Packets: 10, Errors: 1, Usec: 1000, Pps: 10000}},
			Warnings: []string{"w"}, Interrupted: true,
		}, false},
		{"irq verify → IrqVerify", &topology.VerifyResult{Iface: "eth1", Interval: "5s", OffCPU: 1, IRQs: []topology.VerifiedIRQ{
			{IRQ: 42, Name: "eth1-TxRx-1", Queue: 1, Planned: "1", Source: "journal", Fired: map[string]uint64{"1": 2, "5": 7}, Total: 9, OffCPU: true, Note: "n"},
		}}, &pb.IrqVerify{}, &pb.IrqVerify{Iface: "eth1", Interval: "5s", OffCpu: 1, Irqs: []*pb.VerifiedIrq{
			{Irq: 42, Name: "eth1-TxRx-1", Queue: 1, Planned: "1", Source: "journal", Fired: map[int32]uint64{1: 2, 5: 7}, Total: 9, OffCpu: true, Note: "n"},
		}}, false},
		// The receiver's report, as its package prints it, less
		// missing_ranges: JSON [[from, to]] pairs are SeqRange messages here.
		{"receiver report → ReceiverReport", json.RawMessage(`{"method": "xdp", "method_reason": "native", "packets": 5, "other_packets": 1,
			"streams": [{"src": "198.18.0.2", "dst": "198.18.1.2", "dst_port": 9, "received": 5, "max_seq": 6,
			             "duplicates": 0, "reordered": 1, "late": 3, "missing": 1, "missing_ranges_from": 5, "beyond_capacity": 2, "unrecorded": 1}],
			"link": {"rx_packets": 6, "rx_dropped": 1, "rx_missed": 2, "rx_fifo": 3, "xdp_packets": 5, "xdp_drops": 0},
			"ring_drops": 4, "overflow_packets": 3, "window": 65536}`), &pb.ReceiverReport{}, &pb.ReceiverReport{
			Method: "xdp", MethodReason: "native", Packets: 5, OtherPackets: 1,
			Streams:   []*pb.StreamReport{{Src: "198.18.0.2", Dst: "198.18.1.2", DstPort: 9, Received: 5, MaxSeq: 6, Reordered: 1, Late: 3, Missing: 1, MissingRangesFrom: 5, BeyondCapacity: 2, Unrecorded: 1}},
			Link:      &pb.LinkCounters{RxPackets: 6, RxDropped: 1, RxMissed: 2, RxFifo: 3, XdpPackets: 5},
			RingDrops: 4, OverflowPackets: 3, Window: 65536,
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.cli)
			if err != nil {
				t.Fatal(err)
			}
			if err := (protojson.UnmarshalOptions{DiscardUnknown: tc.subset}).Unmarshal(b, tc.into); err != nil {
				t.Fatalf("the CLI's JSON does not read into %T: %v\n%s", tc.into, err, b)
			}
			if d := cmp.Diff(tc.want, tc.into, protocmp.Transform()); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			// And back: every key the message prints is one the CLI printed.
			out, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(tc.into)
			if err != nil {
				t.Fatal(err)
			}
			var cliKeys, protoKeys map[string]any
			if err := json.Unmarshal(b, &cliKeys); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(out, &protoKeys); err != nil {
				t.Fatal(err)
			}
			for k := range protoKeys {
				if _, ok := cliKeys[k]; !ok {
					t.Errorf("protojson prints %q, which the CLI's JSON does not have", k)
				}
			}
		})
	}
}
