package results_test

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/coordinator/results"
	"github.com/linerate/linerate/coordinator/results/resultstest"
	"github.com/linerate/linerate/doctor"
	"github.com/linerate/linerate/latency"
)

// scaled returns the campaign with size's throughput (and NDR) times f.
func scaled(size int, f float64) *results.Document {
	d := resultstest.Campaign()
	for i := range d.Summary {
		if d.Summary[i].Size == size {
			d.Summary[i].ThroughputPPS *= f
			d.Summary[i].NDRPPS *= f
		}
	}
	return d
}

func TestResultsCompareThreshold(t *testing.T) {
	a := resultstest.Campaign()
	cases := []struct {
		name      string
		b         *results.Document
		threshold float64
		flagged   []int // sizes flagged
	}{
		{"same", resultstest.Campaign(), 0, nil},
		{"1.5% lower, default 2%", scaled(64, 0.985), 0, nil},
		{"exactly 2% lower is not more than 2%", scaled(512, 0.98), 0.02, nil},
		{"2.5% lower, default 2%", scaled(512, 0.975), 0, []int{512}},
		{"2.5% lower, threshold 3%", scaled(512, 0.975), 0.03, nil},
		{"1.5% lower, threshold 1%", scaled(1518, 0.985), 0.01, []int{1518}},
		{"better is never a regression", scaled(64, 1.2), 0, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmpn := results.Compare(a, c.b, c.threshold)
			var flagged []int
			for _, s := range cmpn.Sizes {
				if s.Regression {
					flagged = append(flagged, s.Size)
				}
			}
			if !cmp.Equal(flagged, c.flagged) || cmpn.Regression != (len(c.flagged) > 0) {
				t.Errorf("flagged %v (regression %v), want %v", flagged, cmpn.Regression, c.flagged)
			}
			if len(cmpn.Sizes) != 3 || len(cmpn.OnlyA) != 0 || len(cmpn.OnlyB) != 0 || len(cmpn.Hosts) != 0 {
				t.Errorf("sizes %d only A %v only B %v hosts %v", len(cmpn.Sizes), cmpn.OnlyA, cmpn.OnlyB, cmpn.Hosts)
			}
		})
	}
}

func TestResultsCompareDeltas(t *testing.T) {
	a := resultstest.Campaign()
	b := resultstest.Campaign()
	b.ID = "20270101T000000Z-bbbbbb"
	// B: 64-byte throughput down 10 %, PDR down 5 %, a 9000-byte size
	// added and 1518 dropped; loss up at 512.
	b.Summary[0].ThroughputPPS = a.Summary[0].ThroughputPPS * 0.9
	b.Summary[0].PDRPPS = a.Summary[0].PDRPPS * 0.95
	b.Summary[1].LossRatio = 0.03
	b.Summary[2].Size = 9000
	c := results.Compare(a, b, 0)
	if c.Threshold != results.DefaultThreshold || !c.Regression {
		t.Fatalf("threshold %v regression %v", c.Threshold, c.Regression)
	}
	if !cmp.Equal(c.OnlyA, []string{"1518"}) || !cmp.Equal(c.OnlyB, []string{"9000"}) {
		t.Errorf("only A %v only B %v", c.OnlyA, c.OnlyB)
	}
	s64 := c.Sizes[0]
	if s64.Size != 64 || !s64.Regression || s64.ThroughputA != a.Summary[0].ThroughputPPS ||
		!near(s64.DeltaPct, -10) || !near(s64.DeltaPPS, -0.1*a.Summary[0].ThroughputPPS) {
		t.Errorf("64: %+v", s64)
	}
	if s64.PDR == nil || !near(s64.PDR.DeltaPct, -5) || s64.NDR == nil || s64.NDR.DeltaPct != 0 {
		t.Errorf("64 NDR %+v PDR %+v", s64.NDR, s64.PDR)
	}
	if want := []string{"throughput 10.00% lower", "PDR 5.00% lower"}; !cmp.Equal(s64.Why, want) {
		t.Errorf("64 why = %q, want %q", s64.Why, want)
	}
	s512 := c.Sizes[1]
	if !s512.Regression || !near(s512.LossDelta, 0.03) || len(s512.Why) != 1 || !strings.Contains(s512.Why[0], "loss ratio up 3 points") {
		t.Errorf("512: %+v", s512)
	}
	// The regression as an error: each size of B worse, and why.
	err := c.Err()
	if want := "regression: " + b.ID + " is worse than " + a.ID + " beyond 2% (64: throughput 10.00% lower, PDR 5.00% lower; 512: loss ratio up 3 points"; !errors.Is(err, results.ErrRegression) || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %v, want ErrRegression starting %q", err, want)
	}
	if err := results.Compare(a, a, 0).Err(); err != nil {
		t.Errorf("no regression: %v", err)
	}
}

// near reports whether a and b are equal to 1e-9, relative above 1.
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(a), math.Abs(b)) }

func TestResultsCompareFingerprints(t *testing.T) {
	a := resultstest.Campaign()
	b := resultstest.Campaign()
	// r1 got a new driver and firmware, its queue 2 moved to another CPU
	// and queue 3 went; s2 is now a 25G port; r2 was replaced by r3
	// (paired by role); a new sender s3 came.
	r1 := &b.Hosts[2]
	r1.Driver, r1.Firmware, r1.Kernel = "ice", "4.40 0x8001af1d", "6.12.0-1-amd64"
	r1.IRQMap = append([]coordinator.IRQPin(nil), r1.IRQMap[:3]...)
	r1.IRQMap[2].CPU = 9
	b.Hosts[1].LinkSpeedMbps = 25000
	b.Hosts[3].Name = "r3"
	b.Hosts = append(b.Hosts, b.Hosts[0])
	b.Hosts[4].Name, b.Hosts[4].Method = "s3", "afpacket"
	b.Spec, _ = json.Marshal(map[string]any{"name": "x710-lab-qualification", "frame_sizes": []int{64}})

	c := results.Compare(a, b, 0)
	got := map[string]map[string]results.FieldDiff{}
	for _, h := range c.Hosts {
		m := map[string]results.FieldDiff{}
		for _, f := range h.Fields {
			m[f.Field] = f
		}
		got[h.A+"|"+h.B] = m
	}
	if len(got) != 4 {
		t.Errorf("host diffs = %+v, want r1, s2, r2→r3, and s3", c.Hosts)
	}
	r1d := got["r1|r1"]
	for _, f := range []string{"driver", "firmware", "kernel", "irq_map"} {
		if _, ok := r1d[f]; !ok {
			t.Errorf("r1: no %s difference in %+v", f, r1d)
		}
	}
	if d := r1d["driver"]; d.A != "i40e" || d.B != "ice" {
		t.Errorf("r1 driver diff = %+v", d)
	}
	if d := r1d["irq_map"].Detail; d != "q2/txrx irq90→cpu5 became irq90→cpu9; q3/txrx only in A (irq91→cpu7)" {
		t.Errorf("r1 irq detail = %q", d)
	}
	if d := got["s2|s2"]["link_speed_mbps"]; d.A != "10000" || d.B != "25000" || len(got["s2|s2"]) != 1 {
		t.Errorf("s2 = %+v", got["s2|s2"])
	}
	if m, ok := got["r2|r3"]; !ok || len(m) != 0 {
		t.Errorf("r2 renamed r3: %+v, %v", m, ok)
	}
	if _, ok := got["|s3"]; !ok {
		t.Errorf("s3 (B only) missing: %+v", c.Hosts)
	}
	if want := []string{"agents", "frame_sizes", "pattern", "search", "trial_duration"}; !cmp.Equal(c.Spec, want) {
		t.Errorf("spec differs = %v, want %v", c.Spec, want)
	}
}

// A run document compares with a campaign of the same size.
func TestResultsCompareRunWithCampaign(t *testing.T) {
	c := results.Compare(resultstest.Campaign(), resultstest.Run(), 0)
	if len(c.Sizes) != 1 || c.Sizes[0].Size != 512 || !cmp.Equal(c.OnlyA, []string{"64", "1518"}) {
		t.Fatalf("sizes %+v only A %v", c.Sizes, c.OnlyA)
	}
	// 4.0 against 4.7 Mpps: 15 % lower.
	if !c.Sizes[0].Regression {
		t.Errorf("512 not flagged: %+v", c.Sizes[0])
	}
}

func TestResultsLineRatePPS(t *testing.T) {
	host := func(name, role string, mbps int64) results.Fingerprint {
		return results.Fingerprint{Name: name, Role: role, LinkSpeedMbps: mbps}
	}
	flow := func(s, r string) coordinator.Flow { return coordinator.Flow{Sender: s, Receiver: r} }
	line64 := 14880952.380952381 // 10G, 64-byte frames
	cases := []struct {
		name  string
		hosts []results.Fingerprint
		flows []coordinator.Flow
		want  float64
	}{
		{"pairwise 2x2", []results.Fingerprint{host("s1", "sender", 10000), host("s2", "sender", 10000), host("r1", "receiver", 10000), host("r2", "receiver", 10000)},
			[]coordinator.Flow{flow("s1", "r1"), flow("s2", "r2")}, 2 * line64},
		{"slowest link", []results.Fingerprint{host("s1", "sender", 25000), host("r1", "receiver", 10000)},
			[]coordinator.Flow{flow("s1", "r1")}, line64},
		{"fan-in 3->1 is bound by the receiver's link", []results.Fingerprint{host("s1", "sender", 10000), host("s2", "sender", 10000), host("s3", "sender", 10000), host("r1", "receiver", 10000)},
			[]coordinator.Flow{flow("s1", "r1"), flow("s2", "r1"), flow("s3", "r1")}, line64},
		{"no flows: senders x slowest", []results.Fingerprint{host("s1", "sender", 10000), host("s2", "sender", 100000), host("r1", "receiver", 40000)},
			nil, 2 * line64},
		{"no speed", []results.Fingerprint{host("s1", "sender", 0)}, []coordinator.Flow{flow("s1", "r1")}, 0},
	}
	for _, c := range cases {
		if got := results.LineRatePPS(c.hosts, c.flows, 64); !near(got/c.want, 1) && !(c.want == 0 && got == 0) {
			t.Errorf("%s: %.1f, want %.1f", c.name, got, c.want)
		}
	}
}

// A size whose throughput trial's p99 one-way delay is higher in B by
// more than the latency threshold and than both clocks' bounds is a
// regression; one within the bounds, or on unsynchronised clocks, is
// shown and explained, never flagged; one within the threshold is not
// flagged.
func TestResultsCompareLatency(t *testing.T) {
	doc := func(p99 int64, clock latency.Clock, errUs float64) *results.Document {
		var r latency.Recorder
		for range 98 {
			r.Record(100)
		}
		r.Record(p99) // ranks 99 and 100: the p99
		r.Record(p99)
		l := &latency.Latency{Histogram: r.H, Clock: clock, ClockErrorUs: errUs}
		return &results.Document{Kind: results.KindCampaign, Summary: []results.SizeResult{{Size: 64, ThroughputPPS: 1000, ThroughputTrial: 1}},
			Trials: []results.Trial{{N: 1, Size: 64, Valid: true, Passed: true, Flows: []coordinator.Flow{{Sender: "s1", Receiver: "r1", Latency: l}}}}}
	}
	for _, tc := range []struct {
		name       string
		a, b       *results.Document
		regression bool
		why        string
	}{
		{"higher beyond the threshold", doc(1000, latency.SameHost, 0), doc(1200, latency.SameHost, 0), true, "p99 latency 20.00% higher (1000 → 1200 µs)"},
		{"within the threshold", doc(1000, latency.SameHost, 0), doc(1050, latency.SameHost, 0), false, ""},
		{"within the clocks' bounds", doc(1000, latency.Estimated, 150), doc(1200, latency.Estimated, 100), false, "within the clocks' bounds (±250 µs)"},
		{"unsynchronised", doc(1000, latency.SameHost, 0), doc(5000, latency.Unsynchronised, 0), false, "on unsynchronised clocks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := results.CompareWith(tc.a, tc.b, 0, 0)
			d := c.Sizes[0]
			if c.Regression != tc.regression || d.Latency == nil || d.Latency.P99A != 1000 || c.LatencyThreshold != results.DefaultLatencyThreshold {
				t.Errorf("regression %v, latency %+v, threshold %v", c.Regression, d.Latency, c.LatencyThreshold)
			}
			if why := strings.Join(d.Why, "; "); !strings.Contains(why, tc.why) || tc.why == "" && why != "" {
				t.Errorf("why %q, want %q", why, tc.why)
			}
		})
	}
}

// What the hosts' checks read and judged is part of the fingerprint: a
// governor, a ring size, a pause setting and a verdict that differ are
// each flagged, but not a verdict that depends on the run (irqbalance
// on --irqbalance, mtu, clock, kernel); a document that predates the
// checks is no difference, its unknown firmware neither.
func TestResultsCompareChecked(t *testing.T) {
	host := func(gov, rings, pause, irqb string) coordinator.Host {
		return coordinator.Host{
			Name: "r1", Role: "receiver",
			Facts: &doctor.Facts{CPUModel: "Intel(R) Xeon(R) Gold 6230", Microcode: "0x5003604", Governor: gov, Rings: rings,
				Coalesce: "adaptive-rx off, rx-usecs 0", Pause: pause, Offloads: "gro on", Firmware: "4.40"},
			Checks: []doctor.Check{
				{ID: "irqbalance", Status: doctor.Status(irqb)}, {ID: "steering", Status: doctor.Status(irqb)}, {ID: "rings", Status: doctor.Pass},
				{ID: "mtu", Status: doctor.Status(irqb)}, {ID: "clock", Status: doctor.Status(irqb)}, {ID: "kernel", Status: doctor.Status(irqb)},
			},
		}
	}
	a := resultstest.Campaign()
	b := resultstest.Campaign()
	a.Hosts[2] = results.FingerprintOf(host("performance", "rx 4096/4096 tx 4096/4096", "autoneg off rx off tx off", "PASS"))
	b.Hosts[2] = results.FingerprintOf(host("powersave", "rx 512/4096 tx 512/4096", "autoneg on rx on tx on", "FAIL"))
	if a.Hosts[2].Firmware != "4.40" || a.Hosts[2].Checks["irqbalance"] != "PASS" {
		t.Fatalf("fingerprint %+v: want the facts' firmware and the verdicts", a.Hosts[2])
	}
	c := results.Compare(a, b, 0)
	var fields []string
	for _, h := range c.Hosts {
		if h.A == "r1" {
			for _, f := range h.Fields {
				fields = append(fields, f.Field+": "+f.A+" → "+f.B)
			}
		}
	}
	want := []string{
		"governor: performance → powersave",
		"rings: rx 4096/4096 tx 4096/4096 → rx 512/4096 tx 512/4096",
		"pause: autoneg off rx off tx off → autoneg on rx on tx on",
		"check steering: PASS → FAIL",
	}
	if diff := cmp.Diff(want, fields); diff != "" {
		t.Errorf("r1's differences (-want +got):\n%s", diff)
	}

	// B from before the checks: its hosts have none, and nothing they
	// read is a difference.
	old := resultstest.Campaign()
	old.Hosts[2].Name, old.Hosts[2].Role, old.Hosts[2].Firmware = "r1", "receiver", ""
	for _, h := range results.Compare(a, old, 0).Hosts {
		for _, f := range h.Fields {
			if f.Field == "governor" || f.Field == "firmware" || strings.HasPrefix(f.Field, "check ") {
				t.Errorf("a document without checks flagged %+v", f)
			}
		}
	}
}
