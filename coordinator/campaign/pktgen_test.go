package campaign

import (
	"strings"
	"testing"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/pktgen"
)

// A campaign's pktgen block reaches every trial's spec.
func TestParsePktgen(t *testing.T) {
	s, err := Parse([]byte("agents: {senders: [a], receivers: [b]}\nframe_sizes: [64]\npktgen:\n  xmit_mode: queue_xmit\n  clone_skb: 4\n" +
		"  udp_src: 1024-1087\n  queue_map: 2\n  node_alloc: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	var run coordinator.Spec
	s.Pktgen.into(&run)
	if run.XmitMode != pktgen.XmitQueue || run.CloneSkb != 4 || run.Burst != 0 || run.UDPSrcMin != 1024 || run.UDPSrcMax != 1087 ||
		!run.HasQueueMap || run.QueueMapMin != 2 || run.QueueMapMax != 2 || !run.NodeAlloc {
		t.Errorf("trial spec %+v", run)
	}
	if s.Pktgen.UDPSrc.String() != "1024-1087" || s.Pktgen.QueueMap.String() != "2" {
		t.Errorf("ranges %s and %s", s.Pktgen.UDPSrc, s.Pktgen.QueueMap)
	}
	// Without the block: nothing of it.
	s, err = Parse([]byte("agents: {senders: [a], receivers: [b]}\nframe_sizes: [64]\n"))
	run = coordinator.Spec{}
	if s.Pktgen.into(&run); err != nil || run.HasQueueMap || run.UDPSrcMin != 0 || run.XmitMode != "" {
		t.Errorf("no pktgen block: %v %+v", err, run)
	}
}

func TestParsePktgenRefusals(t *testing.T) {
	base := "agents: {senders: [a], receivers: [b]}\nframe_sizes: [64]\n"
	for _, tc := range []struct{ spec, want string }{
		{base + "pktgen:\n  burst: 3\n", "line 3: pktgen: burst 3 × clone_skb 1: 3 copies of each frame: want a power of two"},
		{base + "backend: xdp\npktgen:\n  clone_skb: 2\n", "pktgen: clone_skb: kernel pktgen only (backend kernel or auto); backend xdp"},
		{base + "pktgen:\n  xmit_mode: netif_receive\n", `pktgen: xmit mode "netif_receive": want start_xmit or queue_xmit`},
		{base + "pktgen:\n  udp_src: 0-9\n", "pktgen: udp source ports 0-9: want 1 <= min <= max <= 65534"},
		{base + "pktgen:\n  udp_src: many\n", `line 4: pktgen.udp_src: "many": want a number or a range A-B`},
		{base + "pktgen:\n  queue_map: [1, 2]\n", `line 4: pktgen.queue_map: "": want a number or a range A-B`},
		{base + "back_to_back: {}\npktgen:\n  burst: 4\n", "line 5: pktgen.burst: 4 with back_to_back"},
		{base + "pktgen:\n  brust: 4\n", "field brust not found"},
	} {
		_, err := Parse([]byte(tc.spec))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.spec, err, tc.want)
		}
	}
}
