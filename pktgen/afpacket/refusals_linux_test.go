package afpacket

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/linerate/linerate/pktgen"
)

func TestRefusals(t *testing.T) {
	base := pktgen.Config{Device: "lra", CPUs: []int{0}, Count: 10, PktSize: 60, DstMin: mustAddr("198.18.0.2"), SrcMin: mustAddr("198.18.0.1")}
	for _, tc := range []struct {
		field string
		edit  func(*pktgen.Config)
	}{
		{"imix", func(c *pktgen.Config) {
			c.PktSize, c.IMIX = 0, pktgen.IMIX{{Size: 64, Weight: 1}, {Size: 1004, Weight: 1}}
		}},
		{"clone_skb", func(c *pktgen.Config) { c.CloneSkb = 10 }},
		{"burst", func(c *pktgen.Config) { c.Burst = 8 }},
		{"xmit_mode", func(c *pktgen.Config) { c.XmitMode = pktgen.XmitNetifReceive }}, // queue_xmit it can: through the qdisc
		{"flows", func(c *pktgen.Config) { c.Flows, c.FlowLen = 4, 10 }},
		{"queue_map", func(c *pktgen.Config) { c.HasQueueMap, c.QueueMapMax = true, 3 }},
		{"flag", func(c *pktgen.Config) { c.Flags = []string{"UDPSRC_RND"} }},
		{"min_pkt_size", func(c *pktgen.Config) { c.PktSize, c.MinPktSize, c.MaxPktSize = 0, 60, 100 }},
	} {
		c := base
		tc.edit(&c)
		_, err := New(nil).Run(context.Background(), c, nil)
		if !errors.Is(err, pktgen.ErrUnsupported) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: %v", tc.field, err)
		}
	}
}

func mustAddr(s string) netip.Addr { return netip.MustParseAddr(s) }
