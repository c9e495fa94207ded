package coordinator

import (
	"context"
	"strings"
	"testing"
	"time"

	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
	"github.com/linerate/linerate/topology"
)

// Each host's irq_verify lands in its entry as the agent sent it; a host
// whose queue IRQs fired off their planned CPUs is named in the run's
// warnings with the IRQ, its queue, the planned and the fired CPUs; a
// host without queue IRQs has none, with the reason its tuning was
// skipped for.
func TestRunRecordsIRQVerify(t *testing.T) {
	s1 := sender("s1", "198.18.0.1", 100, "198.18.0.1")
	s1.irqVerify = &lineratev1.IrqVerify{Iface: "eth1", Interval: "1s", OffCpu: 1, Irqs: []*lineratev1.VerifiedIrq{
		{Irq: 41, Name: "eth1-TxRx-0", Queue: 0, Planned: "0", Source: "journal", Fired: map[int32]uint64{0: 500}, Total: 500},
		{Irq: 42, Name: "eth1-TxRx-1", Queue: 1, Planned: "1", Source: "journal", Fired: map[int32]uint64{5: 7, 1: 2}, Total: 9, OffCpu: true},
	}}
	s2 := sender("s2", "198.18.0.2", 100, "198.18.0.2")
	s2.irqVerify = &lineratev1.IrqVerify{Iface: "eth1", Interval: "1s", Irqs: []*lineratev1.VerifiedIrq{
		{Irq: 41, Name: "eth1-TxRx-0", Queue: 0, Planned: "0", Source: "journal", Fired: map[int32]uint64{0: 50}, Total: 50},
	}}
	r1 := receiver("r1", "198.18.0.101") // a fake without queue IRQs, reporting none
	c := newFakeCluster(t, s1, s2, r1)
	spec := Spec{Senders: []string{"s1", "s2"}, Receivers: []string{"r1"}, Pattern: FanIn, Count: 100, Drain: time.Millisecond}
	wire(spec, c)
	res, err := (&Runner{Cluster: c, Dial: c.dial}).Run(context.Background(), spec)
	if err != nil || res.Status != StatusOK {
		t.Fatalf("run: %v %s %s", err, res.Status, res.Error)
	}
	hosts := map[string]Host{}
	for _, h := range res.Hosts {
		hosts[h.Name] = h
	}
	v := hosts["s1"].IRQVerify
	if v == nil || v.OffCPU != 1 || len(v.IRQs) != 2 || v.IRQs[1].Fired["5"] != 7 || !v.IRQs[1].OffCPU || v.IRQs[0].Source != "journal" {
		t.Fatalf("s1 irq_verify: %+v", v)
	}
	if v := hosts["s2"].IRQVerify; v == nil || v.OffCPU != 0 || hosts["s2"].IRQVerifyReason != "" {
		t.Errorf("s2 irq_verify: %+v (%q)", v, hosts["s2"].IRQVerifyReason)
	}
	if h := hosts["r1"]; h.IRQVerify != nil || h.IRQVerifyReason != topology.NoQueueIRQs || h.Tuned != "not tuned: "+topology.NoQueueIRQs {
		t.Errorf("r1: irq_verify %+v, reason %q, tuned %q", h.IRQVerify, h.IRQVerifyReason, h.Tuned)
	}
	var off []string
	for _, w := range res.Warnings {
		if strings.Contains(w, "planned") {
			off = append(off, w)
		}
	}
	want := "s1: 1 queue IRQs of eth1 fired off their planned CPUs: irq 42 (eth1-TxRx-1, queue 1) planned on CPU 1 fired on 1:2 5:7"
	if len(off) != 1 || off[0] != want {
		t.Errorf("off-CPU warnings %q, want exactly %q", off, want)
	}
}

// An agent that reports no irq_verify although its NIC has queue IRQs
// gives its reason; one that gives none predates irq_verify.
func TestVerifiedIntoReasons(t *testing.T) {
	for _, tc := range []struct {
		queueIRQs bool
		reason    string
		want      string
	}{
		{false, "not verified: whatever", topology.NoQueueIRQs},
		{true, "not verified: read the counts after the run eth1: permission denied", "not verified: read the counts after the run eth1: permission denied"},
		{true, "", "not verified: the agent did not report where its queue IRQs fired (it predates irq_verify)"},
	} {
		n := &node{host: &Host{}, nic: nicFacts{queueIRQs: tc.queueIRQs}}
		verifiedInto(n, nil, tc.reason)
		if n.host.IRQVerify != nil || n.host.IRQVerifyReason != tc.want {
			t.Errorf("queue IRQs %v, agent's reason %q: %+v, want reason %q", tc.queueIRQs, tc.reason, n.host, tc.want)
		}
	}
}
