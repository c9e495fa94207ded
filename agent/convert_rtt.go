package agent

import (
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// rttPlanFromProto is Configure's latency stream (nil: none asked).
func rttPlanFromProto(p *lineratev1.RttStream) (*rttPlan, error) {
	if p == nil {
		return nil, nil
	}
	if p.Port == 0 || p.Port > 65535 {
		return nil, failf(ErrInvalid, "rtt.port %d: want a UDP port, 1 to 65535", p.Port)
	}
	return &rttPlan{port: uint16(p.Port), ratePPS: p.RatePps}, nil
}

// rttToProto is a send's round trips, one per destination (none when
// none were asked or they failed: the summary's warnings say why).
func rttToProto(o *rttOutcome) []*lineratev1.RttResult {
	if o == nil {
		return nil
	}
	var out []*lineratev1.RttResult
	for _, s := range o.streams {
		out = append(out, &lineratev1.RttResult{
			Dst: addrString(s.dst), Port: uint32(s.port), Sent: s.sent,
			Returned: streamToProto(s.returned), LowestUs: s.lowest,
		})
	}
	return out
}
