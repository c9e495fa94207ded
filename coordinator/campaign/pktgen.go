package campaign

import (
	"fmt"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/pktgen"
)

// Pktgen is kernel pktgen's surface every trial of a campaign sends with
// (coordinator.Spec's fields of the same names, surface.go there):
//
//	pktgen:
//	  xmit_mode: queue_xmit   # or start_xmit (default)
//	  burst: 4                # copies per transmit call; the receivers count them
//	  clone_skb: 2            # sends of each built frame
//	  udp_src: 1024-1087      # source port range every stream walks (RSS spread)
//	  queue_map: 0-3          # TX queue range every thread sends on
//	  node_alloc: true        # frames on the NIC's NUMA node
type Pktgen struct {
	XmitMode  pktgen.XmitMode `yaml:"xmit_mode"`
	Burst     int             `yaml:"burst"`
	CloneSkb  int             `yaml:"clone_skb"`
	UDPSrc    PortRange       `yaml:"udp_src"`
	QueueMap  QueueRange      `yaml:"queue_map"`
	NodeAlloc bool            `yaml:"node_alloc"`
}

// Range is "A-B" or one number A in a spec (Set: given).
type Range struct {
	Min, Max int
	Set      bool
}

// PortRange is pktgen.udp_src and QueueRange pktgen.queue_map: a Range
// each, whose errors name their key.
type (
	PortRange  struct{ Range }
	QueueRange struct{ Range }
)

// UnmarshalYAML reads 1024, "1024" or "1024-1087".
func (r *PortRange) UnmarshalYAML(n *yaml.Node) error { return r.read(n, "pktgen.udp_src") }

// UnmarshalYAML reads 0, "0" or "0-3".
func (r *QueueRange) UnmarshalYAML(n *yaml.Node) error { return r.read(n, "pktgen.queue_map") }

// read reads n as key's range (pktgen.ParseRange); its bounds are the
// run spec's check (checkPktgen).
func (r *Range) read(n *yaml.Node, key string) error {
	a, b, ok := pktgen.ParseRange(n.Value)
	if n.Kind != yaml.ScalarNode || !ok {
		return fmt.Errorf("line %d: %s: %q: want a number or a range A-B", n.Line, key, n.Value)
	}
	*r = Range{Min: a, Max: b, Set: true}
	return nil
}

// String is "A-B" (or "A").
func (r Range) String() string {
	if r.Min == r.Max {
		return strconv.Itoa(r.Min)
	}
	return fmt.Sprintf("%d-%d", r.Min, r.Max)
}

// into sets p in a trial's spec.
func (p Pktgen) into(run *coordinator.Spec) {
	run.XmitMode, run.Burst, run.CloneSkb, run.NodeAlloc = p.XmitMode, p.Burst, p.CloneSkb, p.NodeAlloc
	if p.UDPSrc.Set {
		run.UDPSrcMin, run.UDPSrcMax = p.UDPSrc.Min, p.UDPSrc.Max
	}
	if p.QueueMap.Set {
		run.HasQueueMap, run.QueueMapMin, run.QueueMapMax = true, p.QueueMap.Min, p.QueueMap.Max
	}
}

// checkPktgen refuses what no trial could send, as a run's spec does
// (coordinator.Spec.CheckSurface), and a burst with the back-to-back
// test, whose trials count their frames one by one.
func (s *Spec) checkPktgen() error {
	run := coordinator.Spec{Backend: s.Backend}
	s.Pktgen.into(&run)
	if err := run.CheckSurface(); err != nil {
		return s.errf("pktgen", "%v", err)
	}
	if s.Pktgen.Burst > 1 && s.BackToBack != nil {
		return s.errf("pktgen.burst", "%d with back_to_back: its trials send bursts of any number of frames, pktgen only whole multiples of its burst: want burst 1", s.Pktgen.Burst)
	}
	return nil
}
