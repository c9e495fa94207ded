package campaign

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/linerate/linerate/coordinator/search"
)

// ipv6 and vlan reach every trial; the line rate of each size is the
// frame (FCS and tag counted) plus 20 B of preamble and gap on the
// announced links, by hand: s1 and s2 at 10 Gb/s into r2 at 10 Gb/s.
func TestCampaignIPv6VLANLineRate(t *testing.T) {
	d := &dut{limit: func(size int) float64 { return 1e12 }}
	doc, _ := runCampaign(t, d, `agents: {senders: [s1], receivers: [r2]}
frame_sizes: [86, 1522]
ipv6: true
vlan: 100
rates: [100%]
search: {type: none}
trial_duration: 100ms
between_trials: {pause: 1ms}
`, nil)
	if doc.Status != "ok" || len(doc.Summary) != 2 {
		t.Fatalf("status %s, %d sizes: %s", doc.Status, len(doc.Summary), doc.Error)
	}
	want := map[int]float64{86: 11_792_452.83, 1522: 810_635.54} // 1e10/(106*8), 1e10/(1542*8)
	for _, s := range doc.Summary {
		if math.Abs(s.LinePPS-want[s.Size]) > 0.01 {
			t.Errorf("size %d: line rate %.2f pps, want %.2f", s.Size, s.LinePPS, want[s.Size])
		}
	}
	for _, sp := range d.specs {
		if !sp.IPv6 || sp.VLAN != 100 || (sp.FrameSize != 86 && sp.FrameSize != 1522) {
			t.Errorf("trial spec: ipv6 %v vlan %d frame %d, want IPv6, VLAN 100 and the size as given", sp.IPv6, sp.VLAN, sp.FrameSize)
		}
	}
}

// Sizes below the family's smallest frame are refused by name with the
// range and the headers; so is a VLAN id 802.1Q does not have.
func TestCampaignFamilyRefusals(t *testing.T) {
	base := "agents: {senders: [a], receivers: [b]}\n"
	for _, tc := range []struct{ spec, want string }{
		{base + "frame_sizes: [64, 1518]\nipv6: true\n", "line 2: frame_sizes[0]: 64: want 82-9018 bytes for IPv6 (Ethernet frame including FCS, the tag counted: 14 B Ethernet + 40 B IPv6 + 8 B UDP + 16 B pktgen header + 4 B FCS) or imix"},
		{base + "frame_sizes: [64]\nvlan: 100\n", "frame_sizes[0]: 64: want 66-9018 bytes with an 802.1Q tag"},
		{base + "frame_sizes: [82]\nipv6: true\nvlan: 7\n", "frame_sizes[0]: 82: want 86-9018 bytes for IPv6 with an 802.1Q tag"},
		{base + "frame_sizes: [128]\nvlan: 4096\n", "vlan: vlan 4096: want an 802.1Q VLAN id 1-4094"},
		{base + "frame_sizes: [imix]\nbackend: kernel\nipv6: true\nimix: [{size: 64, weight: 1}]\n", "imix[0]: size 64 weight 1: frame size 64: want 82 to 9018 bytes for IPv6"},
	} {
		_, err := Parse([]byte(tc.spec))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("spec:\n%s\nerror %v\nwant it to contain %q", tc.spec, err, tc.want)
		}
	}
	// From the flags, the record keeps the keys as a spec file would.
	s, record, err := FromOptions(Options{Name: "x", Senders: []string{"s1"}, Receivers: []string{"r1"}, Sizes: []Size{{Bytes: 86}},
		Search: search.TypeNone, Rates: []Rate{{PPS: 1000}}, Duration: time.Second, IPv6: true, VLAN: 100})
	var given map[string]any
	if err != nil || !s.IPv6 || s.VLAN != 100 || json.Unmarshal(record, &given) != nil || given["ipv6"] != true || given["vlan"] != float64(100) {
		t.Errorf("from options: %+v %s %v", s, record, err)
	}
}
