package coordinator

import (
	"encoding/json"
	"net/netip"
	"testing"

	recv "github.com/linerate/linerate/receiver"
)

// A stream's keys come in the order documents have always had them,
// whichever of the optional ones are there, and read back as they were.
func TestStreamJSONOrder(t *testing.T) {
	key := recv.StreamReport{Src: netip.MustParseAddr("198.18.0.1"), Dst: netip.MustParseAddr("198.18.0.101"), DstPort: 10000}
	for _, tt := range []struct {
		name string
		s    Stream
		want string
	}{
		{"plain", Stream{StreamReport: withCounts(key, 10, 10), Sent: 10},
			`{"src":"198.18.0.1","dst":"198.18.0.101","dst_port":10000,"sent":10,"received":10,"lost":0,"duplicates":0,"reordered":0,"max_seq":10,"missing":0}`},
		{"both first times", Stream{StreamReport: withArrival(withCounts(key, 9, 10), 2000), Sent: 10, Lost: 1, FirstFrameNs: 1000},
			`{"src":"198.18.0.1","dst":"198.18.0.101","dst_port":10000,"sent":10,"received":9,"lost":1,"duplicates":0,"reordered":0,"max_seq":10,"missing":0,"first_frame_ns":1000,"first_arrival_ns":2000}`},
		{"first frame only", Stream{StreamReport: withCounts(key, 10, 10), Sent: 10, FirstFrameNs: 1000},
			`{"src":"198.18.0.1","dst":"198.18.0.101","dst_port":10000,"sent":10,"received":10,"lost":0,"duplicates":0,"reordered":0,"max_seq":10,"missing":0,"first_frame_ns":1000}`},
	} {
		b, err := json.Marshal(tt.s)
		if err != nil || string(b) != tt.want {
			t.Errorf("%s: %s %v\nwant %s", tt.name, b, err, tt.want)
			continue
		}
		var back Stream
		if err := json.Unmarshal(b, &back); err != nil || back.Src != tt.s.Src || back.Sent != tt.s.Sent || back.Lost != tt.s.Lost ||
			back.Received != tt.s.Received || back.FirstFrameNs != tt.s.FirstFrameNs || back.FirstArrivalNs != tt.s.FirstArrivalNs {
			t.Errorf("%s: read back %+v %v, want %+v", tt.name, back, err, tt.s)
		}
	}
}

func withCounts(r recv.StreamReport, received, maxSeq uint64) recv.StreamReport {
	r.Received, r.MaxSeq = received, maxSeq
	return r
}

func withArrival(r recv.StreamReport, ns uint64) recv.StreamReport {
	r.FirstArrivalNs = ns
	return r
}
