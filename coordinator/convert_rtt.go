package coordinator

import (
	"fmt"

	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// senderRTTOf is a sender's latency streams as its Result gave them (nil:
// none asked, or they failed: its summary's warnings say why).
func senderRTTOf(ps []*lineratev1.RttResult) ([]senderRTT, error) {
	var out []senderRTT
	for i, p := range ps {
		dst, err := streamAddr(p.Dst)
		if err != nil {
			return nil, fmt.Errorf("rtt[%d].dst: %w", i, err)
		}
		if p.Port == 0 || p.Port > 65535 {
			return nil, fmt.Errorf("rtt[%d].port %d: not a UDP port", i, p.Port)
		}
		s := senderRTT{Dst: dst, Port: uint16(p.Port), Sent: p.Sent, LowestUs: p.LowestUs}
		if p.Returned != nil {
			if s.Returned, err = streamReportOf(p.Returned); err != nil {
				return nil, fmt.Errorf("rtt[%d].returned%w", i, err)
			}
		}
		out = append(out, s)
	}
	return out, nil
}
