package report

import (
	"slices"
	"strings"
	"testing"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/coordinator/results"
	"github.com/linerate/linerate/coordinator/results/resultstest"
	"github.com/linerate/linerate/latency"
)

// The run table names both start spreads with their percentiles, the
// streams without a time and what the clocks are worth.
func TestRunTableStartSpread(t *testing.T) {
	res := &coordinator.Result{RunID: "r", Status: coordinator.StatusOK, FrameSize: 64, Pattern: "pairs", StartSkewUS: 900,
		StartSpread: &coordinator.StartSpread{
			FirstFrame:   &coordinator.Spread{Streams: 4, P50US: 12, P99US: 80, MaxUS: 80, Clocks: coordinator.ClocksOne},
			FirstArrival: &coordinator.Spread{Streams: 3, Missing: 1, P50US: 20, P99US: 95, MaxUS: 95, Clocks: coordinator.ClocksSynced, ClockErrorUS: 250},
		}}
	var b strings.Builder
	if err := RunTable(&b, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"agents' start skew 900 µs",
		"start spread of first frames: p50 12 µs, p99 80 µs, max 80 µs over 4 streams; one clock\n",
		"start spread of first arrivals: p50 20 µs, p99 95 µs, max 95 µs over 3 streams (1 without a time); synchronised clocks, each within ±250 µs\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("run table lacks %q:\n%s", want, b.String())
		}
	}
	res.StartSpread = nil
	b.Reset()
	_ = RunTable(&b, res)
	if strings.Contains(b.String(), "start spread") {
		t.Errorf("a run without first-frame times shows a spread:\n%s", b.String())
	}
}

// Every report names how a receiver's XDP program is attached — native in
// the driver or generic after the skb — where the agent said so.
func TestReportsShowXDPMode(t *testing.T) {
	hosts := []coordinator.Host{
		{Name: "r1", Role: "receiver", Method: "xdp", XDPMode: "native"},
		{Name: "r2", Role: "receiver", Method: "xdp", XDPMode: "generic"},
		{Name: "r3", Role: "receiver", Method: "afpacket"},
	}
	res := &coordinator.Result{RunID: "r", Status: coordinator.StatusOK, FrameSize: 64, Pattern: "pairs", Hosts: hosts}
	var b strings.Builder
	if err := RunTable(&b, res); err != nil {
		t.Fatal(err)
	}
	doc := resultstest.Run()
	doc.Hosts = nil
	for _, h := range hosts {
		doc.Hosts = append(doc.Hosts, results.Fingerprint{Name: h.Name, Role: h.Role, Method: h.Method, XDPMode: h.XDPMode})
	}
	var tb, hb strings.Builder
	if err := Table(&tb, doc); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&hb, doc); err != nil {
		t.Fatal(err)
	}
	for what, out := range map[string]string{"run table": b.String(), "document table": tb.String(), "HTML": hb.String()} {
		for _, want := range []string{"xdp (native)", "xdp (generic)", "afpacket"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s lacks %q:\n%s", what, want, out)
			}
		}
	}
}

// The run table gives each timed flow's delays and their clock; a run
// without latency has no such table.
func TestRunTableLatency(t *testing.T) {
	var r latency.Recorder
	for _, d := range []int64{100, 200, 300, 400} {
		r.Record(d)
	}
	res := &coordinator.Result{RunID: "r", Status: coordinator.StatusOK, FrameSize: 64, Flows: []coordinator.Flow{
		{Sender: "s1", Receiver: "r1", Latency: &latency.Latency{Histogram: r.H, Clock: latency.Synchronised, ClockErrorUs: 42}},
		{Sender: "s2", Receiver: "r1"},
	}}
	var b strings.Builder
	if err := RunTable(&b, res); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "LATENCY (µs)  SAMPLES  MIN  P50  P90  P99  P99.9  MAX   MEAN  JITTER  PDV99             CLOCK") ||
		!strings.Contains(out, "s1→r1        4  100  202  400  400    400  400  250.0    17.6    300  synchronised ±42") ||
		strings.Contains(out[strings.Index(out, "LATENCY"):], "s2→r1") || strings.Contains(out, "taken off") {
		t.Errorf("run table:\n%s", out)
	}
	res.Flows[0].Latency.StampCorrectionUs = 200
	b.Reset()
	_ = RunTable(&b, res)
	if !strings.Contains(b.String(), "s1→r1: 200 µs taken off every delay: kernel pktgen stamps a frame before its pacing wait") {
		t.Errorf("a stamp correction, not said:\n%s", b.String())
	}
	res.Flows[0].Latency = nil
	b.Reset()
	_ = RunTable(&b, res)
	if strings.Contains(b.String(), "LATENCY") {
		t.Errorf("no flow timed, yet:\n%s", b.String())
	}
}

// The live line gives each agent's phase and rates, and a receiver's
// flows' running p50 and p99.
func TestSampleLineLatency(t *testing.T) {
	line := SampleLine(map[string]coordinator.Sample{
		"s1": {Phase: "RUNNING", PPS: 5000, L2BPS: 2.56e6},
		"r1": {Phase: "ARMED", PPS: 5000, L2BPS: 2.56e6, Latency: []coordinator.FlowLatency{{Sender: "s1", Samples: 9, P50US: 20224, P99US: 26368}}},
	})
	want := "r1 ARMED 5.0 kpps 2.56 Mb/s, from s1 p50 20224 µs p99 26368 µs | s1 RUNNING 5.0 kpps 2.56 Mb/s"
	if line != want {
		t.Errorf("live line %q, want %q", line, want)
	}
}

// A trial that timed its packets carries its delays' p50, p99, max and
// clock in the CSV, over all its flows; the size's summary row those of
// the trial that set its throughput.
func TestCSVLatency(t *testing.T) {
	rec := func(delays ...int64) *latency.Latency {
		var r latency.Recorder
		for _, d := range delays {
			r.Record(d)
		}
		return &latency.Latency{Histogram: r.H, Clock: latency.SameHost}
	}
	est := rec(500)
	est.Clock, est.ClockErrorUs = latency.Estimated, 30
	doc := &results.Document{Kind: results.KindCampaign, Summary: []results.SizeResult{{Size: 64, ThroughputPPS: 1000, ThroughputTrial: 1, Trials: 1}},
		Trials: []results.Trial{{N: 1, Size: 64, Valid: true, Passed: true, Flows: []coordinator.Flow{
			{Sender: "s1", Receiver: "r1", Latency: rec(10, 20, 30)}, {Sender: "s2", Receiver: "r1", Latency: est},
		}}}}
	recs, col := csvOf(t, doc)
	for _, r := range recs[1:] {
		got := []string{r[col["latency_p50_us"]], r[col["latency_p99_us"]], r[col["latency_max_us"]], r[col["latency_clock"]]}
		if want := []string{"20", "500", "500", "estimated"}; !slices.Equal(got, want) {
			t.Errorf("%s row: latency %v, want %v", r[0], got, want)
		}
	}
}

// A campaign's table gives each size's RFC 2544 latency (its latency
// trials') or, without the test, its throughput trial's delays.
func TestTableSizeLatency(t *testing.T) {
	var r latency.Recorder
	for _, d := range []int64{300, 310, 320} {
		r.Record(d)
	}
	tested := &latency.Latency{Histogram: r.H, Clock: latency.SameHost}
	doc := &results.Document{Kind: results.KindCampaign, Summary: []results.SizeResult{
		{Size: 64, ThroughputPPS: 1000, ThroughputTrial: 1, Trials: 1, Latency: tested, LatencyTrials: 3},
		{Size: 1518, ThroughputPPS: 100, ThroughputTrial: 2, Trials: 1},
	}, Trials: []results.Trial{
		{N: 1, Size: 64, Valid: true, Passed: true},
		{N: 2, Size: 1518, Valid: true, Passed: true, Flows: []coordinator.Flow{{Sender: "s1", Receiver: "r1", Latency: tested}}},
	}}
	var b strings.Builder
	if err := Table(&b, doc); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"LATENCY (µs)", "  64      3 latency trials        3", "1518  the throughput trial        3"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table without %q:\n%s", want, b.String())
		}
	}
}

// The lab's table states the delay its senders added, per sender port,
// and says nothing of a delay where the lab added none.
func TestPathTruthTableDelay(t *testing.T) {
	tr := &coordinator.PathTruth{SwitchPorts: []coordinator.PortTruth{
		{Name: "s1", To: "switch", DelayUs: 20000}, {Name: "s2", To: "switch", DelayUs: 20000, JitterUs: 1500}, {Name: "r1", To: "r1"},
	}}
	var b strings.Builder
	if err := PathTruthTable(&b, tr); err != nil {
		t.Fatal(err)
	}
	if want := "delay added before the switch (netem on each host's egress): s1 20ms, s2 20ms ± 1.5ms\n"; !strings.HasSuffix(b.String(), want) {
		t.Errorf("table:\n%s\nwant it to end %q", b.String(), want)
	}
	tr.SwitchPorts[0].DelayUs, tr.SwitchPorts[1].DelayUs, tr.SwitchPorts[1].JitterUs = 0, 0, 0
	b.Reset()
	_ = PathTruthTable(&b, tr)
	if strings.Contains(b.String(), "delay") {
		t.Errorf("no delay added, table says one:\n%s", b.String())
	}
}

// A run both ways marks each flow with its direction, gives each
// direction's books apart, a host of role both its backend and method,
// and the switch's drops per direction.
func TestRunTableDirections(t *testing.T) {
	res := &coordinator.Result{RunID: "r", Status: coordinator.StatusOK, FrameSize: 64, Pattern: coordinator.Pairwise,
		Flows: []coordinator.Flow{
			{Sender: "s1", Receiver: "r1", Direction: coordinator.Forward, Sent: 1000, Received: 990, Lost: 10, LostNetwork: 10},
			{Sender: "r1", Receiver: "s1", Direction: coordinator.Reverse, Sent: 800, Received: 800},
		},
		Directions: []coordinator.DirectionTotal{
			{Direction: coordinator.Forward, Senders: []string{"s1"}, Receivers: []string{"r1"}, Flows: 1, Sent: 1000, Received: 990, Lost: 10, LostNetwork: 10, LossRatio: 0.01},
			{Direction: coordinator.Reverse, Senders: []string{"r1"}, Receivers: []string{"s1"}, Flows: 1, Sent: 800, Received: 800},
		},
		Hosts: []coordinator.Host{{Name: "s1", Role: "both", Backend: "afpacket", Method: "xdp", XDPMode: "generic"}},
	}
	var b strings.Builder
	if err := RunTable(&b, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"s1→r1 forward", "r1→s1 reverse", "DIRECTION", "forward s1→r1", "reverse r1→s1", "afpacket / xdp"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("run table lacks %q:\n%s", want, b.String())
		}
	}
	lines := strings.Split(b.String(), "\n")
	for _, l := range lines {
		if f := strings.Fields(l); len(f) > 5 && f[0] == "forward" && (f[2] != "1" || f[3] != "1000" || f[4] != "990" || f[5] != "10") {
			t.Errorf("forward totals: %q", l)
		}
	}
	truth := &coordinator.PathTruth{SwitchPorts: []coordinator.PortTruth{{Name: "s1", InDrops: 10, Drops: 10}},
		Directions: []coordinator.DirectionDrops{{Direction: coordinator.Forward, Drops: 10}, {Direction: coordinator.Reverse}}}
	b.Reset()
	if err := PathTruthTable(&b, truth); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"switch drops forward: 10 ", "switch drops reverse: 0 "} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("switch table lacks %q:\n%s", want, b.String())
		}
	}
	// A run one way has neither.
	res.Directions, res.Flows[0].Direction, res.Flows[1].Direction = nil, "", ""
	b.Reset()
	_ = RunTable(&b, res)
	if strings.Contains(b.String(), "DIRECTION") || strings.Contains(b.String(), "forward") {
		t.Errorf("a run one way shows directions:\n%s", b.String())
	}
}

// The run table says what each host's engine chose and why, as `send`
// and `recv` do: a sender backend's notes (afxdp's mode and need_wakeup)
// and a receiver method's reason; a host of role both gives both, and a
// host without them nothing.
func TestRunTableEngineNotes(t *testing.T) {
	res := &coordinator.Result{RunID: "r", Status: coordinator.StatusOK, FrameSize: 64, Pattern: "pairs", Hosts: []coordinator.Host{
		{Name: "s1", Role: "sender", Backend: "afxdp", BackendNotes: []string{"AF_XDP copy mode: driver veth (queues 0)", "need_wakeup off: a virtual device"}},
		{Name: "s2", Role: "sender", Backend: "xdp"},
		{Name: "r1", Role: "receiver", Method: "afxdp", MethodReason: "AF_XDP sockets on 1 receive queues, need_wakeup off"},
		{Name: "b1", Role: "both", Backend: "afxdp", BackendNotes: []string{"need_wakeup on: asked for"}, Method: "xdp", MethodReason: "XDP program native"},
	}}
	var b strings.Builder
	if err := RunTable(&b, res); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(l, "sender ") || strings.HasPrefix(l, "receiver ") {
			got = append(got, l)
		}
	}
	want := []string{
		"sender s1: afxdp: AF_XDP copy mode: driver veth (queues 0)",
		"sender s1: afxdp: need_wakeup off: a virtual device",
		"receiver r1: afxdp: AF_XDP sockets on 1 receive queues, need_wakeup off",
		"sender b1: afxdp: need_wakeup on: asked for",
		"receiver b1: xdp: XDP program native",
	}
	if !slices.Equal(got, want) {
		t.Errorf("engine lines:\n%s\nwant:\n%s\nwhole table:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), b.String())
	}
}

// A burst run whose receivers counted duplicates says what they are and
// that they were counted as received; one without duplicates, or without
// bursts, says nothing of them.
func TestRunTableBurstNote(t *testing.T) {
	res := &coordinator.Result{RunID: "r", Status: coordinator.StatusOK, FrameSize: 64, Pattern: "pairs", Copies: 8, Burst: 4,
		Flows: []coordinator.Flow{{Sender: "s1", Receiver: "r1", Duplicates: 3}, {Sender: "s2", Receiver: "r1", Duplicates: 2}}}
	var b strings.Builder
	if err := RunTable(&b, res); err != nil {
		t.Fatal(err)
	}
	want := "duplicates with --burst 4: 5 copies beyond a frame's 8: a burst pktgen ended early"
	if !strings.Contains(b.String(), want) || !strings.Contains(b.String(), "counted as received (copies the path duplicated would hide as many lost)\n") {
		t.Errorf("run table lacks %q:\n%s", want, b.String())
	}
	for _, mod := range []func(){func() { res.Flows[0].Duplicates, res.Flows[1].Duplicates = 0, 0 }, func() { res.Flows[0].Duplicates, res.Burst, res.Copies = 3, 0, 2 }} {
		mod()
		b.Reset()
		_ = RunTable(&b, res)
		if strings.Contains(b.String(), "duplicates with --burst") {
			t.Errorf("burst %d, duplicates %d: a note of them:\n%s", res.Burst, res.Flows[0].Duplicates, b.String())
		}
	}
}
