package campaign

import (
	"fmt"
	"strconv"
	"strings"

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
	UDPSrc    Range           `yaml:"udp_src"`
	QueueMap  Range           `yaml:"queue_map"`
	NodeAlloc bool            `yaml:"node_alloc"`
}

// Range is "A-B" or one number A in a spec (Set: given).
type Range struct {
	Min, Max int
	Set      bool
}

// UnmarshalYAML reads 7, "7" or "1024-1087".
func (r *Range) UnmarshalYAML(n *yaml.Node) error {
	lo, hi, isRange := strings.Cut(strings.TrimSpace(n.Value), "-")
	a, err1 := strconv.Atoi(strings.TrimSpace(lo))
	b, err2 := a, error(nil)
	if isRange {
		b, err2 = strconv.Atoi(strings.TrimSpace(hi))
	}
	if n.Kind != yaml.ScalarNode || err1 != nil || err2 != nil {
		return fmt.Errorf("line %d: %q: want a number or a range A-B", n.Line, n.Value)
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
