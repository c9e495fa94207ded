package campaign

import (
	"strings"
	"testing"
	"time"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/coordinator/search"
	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/receiver"
)

const goodSpec = `name: nic-qual
agents:
  senders: [s1, s2]
  receivers: [r1, r2]
pattern: pairwise
frame_sizes: [64, 512, 1518]
threads: 1
search:
  type: ndr-pdr
  goals: [0, 0.001]
  resolution: 0.5%
  max_rate: 1.5mpps
trial_duration: 2s
repetitions: 2
warmup: 1s
between_trials:
  pause: 500ms
`

func TestParseGood(t *testing.T) {
	s, err := Parse([]byte(goodSpec))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "nic-qual" || len(s.Sizes) != 3 || s.Sizes[2].Bytes != 1518 || s.Search.Type != search.TypeNDRPDR {
		t.Errorf("spec %+v", s)
	}
	if s.Search.Resolution.Percent != 0.5 || s.Search.Max.PPS != 1.5e6 || s.Search.Min.Percent != 1 {
		t.Errorf("rates: resolution %+v max %+v min %+v", s.Search.Resolution, s.Search.Max, s.Search.Min)
	}
	// initial_duration and max_trials left out: the search's own defaults.
	if time.Duration(s.Duration) != 2*time.Second || s.Search.Initial != 0 || s.Search.MaxTrials != 0 || time.Duration(s.Between.Pause) != 500*time.Millisecond {
		t.Errorf("durations %v %v %v", s.Duration, s.Search.Initial, s.Between.Pause)
	}
	if s.Backend != "auto" || s.Shortfall != "invalid" || s.Repetitions != 2 || len(s.IMIX) != 3 {
		t.Errorf("defaults: backend %s shortfall %s repetitions %d imix %v", s.Backend, s.Shortfall, s.Repetitions, s.IMIX)
	}
}

// RFC 2544's latency test takes the RFC's trial count and length unless
// the spec gives its own; without the section there is none.
func TestParseLatencyDefaults(t *testing.T) {
	s, err := Parse([]byte("agents: {senders: [s1], receivers: [r1]}\nframe_sizes: [64]\nlatency: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Latency == nil || s.Latency.Trials != DefaultLatencyTrials || s.Latency.Duration != DefaultLatencyDuration {
		t.Errorf("latency test %+v, want %d trials of %v", s.Latency, DefaultLatencyTrials, time.Duration(DefaultLatencyDuration))
	}
	if s, _ := Parse([]byte("agents: {senders: [s1], receivers: [r1]}\nframe_sizes: [64]\n")); s.Latency != nil {
		t.Errorf("no latency section, yet %+v", s.Latency)
	}
}

// RFC 2544's back-to-back test takes the RFC's 50 trials of bursts of
// up to 2 s at the line rate, searched to the frame, unless the spec
// gives its own; without the section there is none.
func TestParseBackToBackDefaults(t *testing.T) {
	rfc := BackToBackTest{Trials: DefaultBackToBackTrials, Duration: DefaultBackToBackDuration, Rate: Rate{Percent: 100}, Resolution: 1}
	for section, want := range map[string]BackToBackTest{
		"{}": rfc,
		"{trials: 0, trial_duration: 0s, resolution: 0}":                    rfc, // 0 is left out, as for the latency test
		"{trials: 1000, trial_duration: 1ms, rate: 50kpps, resolution: 10}": {Trials: 1000, Duration: Duration(time.Millisecond), Rate: Rate{PPS: 50000}, Resolution: 10},
	} {
		s, err := Parse([]byte("agents: {senders: [s1], receivers: [r1]}\nframe_sizes: [64]\nback_to_back: " + section + "\n"))
		if err != nil || s.BackToBack == nil || *s.BackToBack != want {
			t.Errorf("back_to_back: %s: %v, %+v, want %+v", section, err, s.BackToBack, want)
		}
	}
	if s, _ := Parse([]byte("agents: {senders: [s1], receivers: [r1]}\nframe_sizes: [64]\n")); s.BackToBack != nil {
		t.Errorf("no back_to_back section, yet %+v", s.BackToBack)
	}
}

func TestParseSweepDefaults(t *testing.T) {
	s, err := Parse([]byte("agents: {senders: [a], receivers: [b]}\nframe_sizes: [64]\nrates: [10%, 200kpps, 1e5]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Search.Type != search.TypeNone || len(s.Rates) != 3 || s.Rates[0].Percent != 10 || s.Rates[1].PPS != 200000 || s.Rates[2].PPS != 1e5 {
		t.Errorf("sweep %+v rates %+v", s.Search, s.Rates)
	}
	if got := s.Rates[0].PerFlow(1e6); got != 1e5 {
		t.Errorf("10%% of 1 Mpps = %v", got)
	}
}

// A spec takes every name of each name's one list: a campaign's backend
// as an agent takes it, userspace too.
func TestParseNames(t *testing.T) {
	base := "agents: {senders: [a], receivers: [b]}\nframe_sizes: [64]\n"
	var specs []string
	for _, b := range pktgen.BackendNames {
		specs = append(specs, base+"backend: "+string(b)+"\n")
	}
	for _, m := range receiver.Methods {
		specs = append(specs, base+"method: "+string(m)+"\n")
	}
	for _, p := range coordinator.Patterns {
		specs = append(specs, "agents: {select: {rack: a}}\nframe_sizes: [64]\npattern: "+string(p)+"\n")
	}
	for _, st := range search.Types {
		rates := ""
		if st == search.TypeNone {
			rates = "rates: [50%]\n"
		}
		specs = append(specs, base+rates+"search: {type: "+string(st)+"}\n")
	}
	for _, sf := range Shortfalls {
		specs = append(specs, base+"shortfall: "+string(sf)+"\n")
	}
	for _, spec := range specs {
		if _, err := Parse([]byte(spec)); err != nil {
			t.Errorf("%q: %v", spec, err)
		}
	}
}

// Every bad spec names its line and field and what would be valid.
func TestParseErrorsNameLineAndField(t *testing.T) {
	base := "agents: {senders: [a], receivers: [b]}\n"
	for _, tc := range []struct {
		spec, want string
	}{
		{base + "frame_sizes: [64, 40]\n", "line 2: frame_sizes[1]: 40: want 64-9018 bytes"},
		{base + "frame_sizes: [64, jumbo]\n", `line 2: frame size "jumbo": want bytes including FCS`},
		{base + "frame_sizes: [64]\nsearch:\n  type: linear\n", `line 4: search.type: "linear": valid searches are rfc2544, ndr-pdr and none`},
		{base + "frame_sizes: [64]\nsearch:\n  max_rate: 1500%\n", "line 4: search.max_rate: 1500%: want at most 100% of line rate"},
		{base + "frame_sizes: [64]\nsearch:\n  resolution: fast\n", `line 4: rate "fast": want packets per second`},
		{base + "frame_sizes: [64]\ntrial_duration: 10\n", `line 3: duration "10": want a Go duration`},
		{base + "frame_sizes: [64]\nlatency:\n  trials: 1001\n", "line 4: latency.trials: 1001: want 1-1000 (RFC 2544 asks for at least 20)"},
		{base + "frame_sizes: [64]\nlatency:\n  trial_duration: 10ms\n", "line 4: latency.trial_duration: 10ms: want 100ms to 1h (RFC 2544 asks for at least 120s)"},
		{base + "frame_sizes: [64]\nback_to_back:\n  trials: -1\n", "line 4: back_to_back.trials: -1: want 1-1000 (RFC 2544 asks for at least 50)"},
		{base + "frame_sizes: [64]\nback_to_back:\n  trials: 99999999999999999999\n", "line 4: cannot unmarshal !!float `9999999...` into int"},
		{base + "frame_sizes: [64]\nback_to_back:\n  trial_duration: 500us\n", "line 4: back_to_back.trial_duration: 500µs: want 1ms to 1m0s, the longest burst searched at the rate (RFC 2544 asks for at least 2s)"},
		{base + "frame_sizes: [64]\nback_to_back:\n  trial_duration: 61s\n", "line 4: back_to_back.trial_duration: 1m1s: want 1ms to 1m0s"},
		{base + "frame_sizes: [64]\ntrial_duraton: 10s\n", "line 3: field trial_duraton not found"},
		{base + "frame_sizes: [64]\nrates: [10%]\nsearch: {type: rfc2544}\n", "line 3: rates: a rfc2544 search finds the rates itself"},
		{base + "frame_sizes: [64]\nsearch: {type: none}\n", "rates: missing: a sweep"},
		{base + "frame_sizes: [64]\npattern: star\n", `line 3: pattern: "star": valid patterns are`},
		{base + "frame_sizes: [imix]\n", "line 2: frame_sizes: imix needs backend: kernel"},
		{base + "frame_sizes: [64]\nback_to_back:\n  rate: 1100%\n", "line 4: back_to_back.rate: 1100%: want at most 100% of line rate"},
		{base + "frame_sizes: [64]\nthreads: 4\nback_to_back:\n  rate: 3pps\n", "line 5: back_to_back.rate: 3pps: below 1 pps per thread over 4 threads"},
		{base + "frame_sizes: [64]\nback_to_back:\n  resolution: 1000000001\n", "line 4: back_to_back.resolution: 1000000001 frames: want 1 (exact) to 1000000000"},
		{base + "frame_sizes: [64]\nback_to_back:\n  resolution: -1\n", "line 4: cannot unmarshal !!int `-1` into uint64"},
		{base + "frame_sizes: [64]\nsearch:\n  loss_goal: 2\n", "line 4: search.loss_goal: 2: want a loss ratio"},
		{base + "frame_sizes: [64]\nsearch:\n  type: ndr-pdr\n  goals: [0, .nan]\n", "search.goals[1]: NaN: want a loss ratio"},
		{base + "frame_sizes: [imix]\nbackend: kernel\nimix: [" + strings.Repeat("{size: 64, weight: 1}, ", 21) + "]\n", "line 4: imix: 21 sizes: pktgen's imix_weights takes at most 20"},
		{base + "frame_sizes: [64]\nsearch:\n  min_rate: 50%\n  max_rate: 40%\n", "line 4: search.min_rate: 50% is not below max_rate 40%"},
		{base + "frame_sizes: [64]\nrates: [10%, inf]\n", "campaign spec: line 3: rates[1]: inf: not a finite rate: want packets per second"},
		{base + "frame_sizes: [64]\nrates: [0.1]\n", "campaign spec: line 3: rates[0]: 0.1pps: below 1 pps: want at least 1 pps per flow"},
		{base + "frame_sizes: [64]\nrates: [nan]\n", "campaign spec: line 3: rates[0]: nan: not a number: want packets per second"},
		{base + "frame_sizes: [64]\nrates: [-5]\n", "campaign spec: line 3: rates[0]: -5pps: want a positive rate"},
		{base + "frame_sizes: [64]\nrates: [inf%]\n", "campaign spec: line 3: rates[0]: inf%: not a finite rate"},
		{base + "frame_sizes: [64]\nthreads: 4\nrates: [3, 400]\n", "campaign spec: line 4: rates[0]: 3pps: below 1 pps per thread over 4 threads: want at least 4 pps"},
		{base + "frame_sizes: [64]\nsearch:\n  max_rate: inf\n", "campaign spec: line 4: search.max_rate: inf: not a finite rate"},
		{base + "frame_sizes: [64]\nsearch:\n  min_rate: 0.5\n  max_rate: 100\n", "campaign spec: line 4: search.min_rate: 0.5pps: below 1 pps"},
		{base + "frame_sizes: [64]\nsearch:\n  resolution: nan\n", "campaign spec: line 4: search.resolution: nan: not a number"},
		{base + "frame_sizes: [64]\nsearch:\n  resolution: 200%\n", "search.resolution: 200% is not below the span from min_rate 1% to max_rate 100%"},
		{base + "frame_sizes: [64]\nsearch:\n  min_rate: 1000\n  max_rate: 5000\n  resolution: 4000\n", "search.resolution: 4000pps is not below the span from min_rate 1000pps to max_rate 5000pps"},
		{base + "frame_sizes: [64]\nshortfall: ignore\n", `line 3: shortfall: "ignore": valid values are invalid (a generator-limited trial proves nothing) and fail (the path pushed back)`},
		{base + "frame_sizes: [64]\nbackend: warp\n", `line 3: backend: "warp": valid backends are auto, kernel, xdp, afxdp, afpacket and userspace`},
		{base + "frame_sizes: [64]\nneed_wakeup: sometimes\n", `line 3: need_wakeup: "sometimes": valid values are auto, on and off`},
		{base + "frame_sizes: [64]\nneed_wakeup: on\n", "line 3: need_wakeup: on: an AF_XDP socket's bind flag (the afxdp backend's, the afxdp receiver method's); backend auto with method auto has none: want auto, or an afxdp engine"},
		{base + "frame_sizes: [64]\nmethod: magic\n", `line 3: method: "magic": valid receiver methods are auto, xdp, afpacket and afxdp`},
		{base + "frame_sizes: [64]\nlatency_mode: both\n", `line 3: latency_mode: "both": valid latency modes are oneway, rtt and off`},
		{base + "frame_sizes: [64]\nlatency_mode: rtt\nmethod: afpacket\n", "line 3: latency_mode: latency rtt with receiver method afpacket: receivers reflect the latency stream with XDP_TX"},
		{base + "frame_sizes: [64]\nlatency_mode: rtt\nrtt_rate: 20000\n", "line 4: rtt_rate: 20000 pps: want 1 to 10000 (0: 1000)"},
		{base + "frame_sizes: [64]\nlatency_mode: off\nlatency: {trials: 2}\n", "line 3: latency_mode: off with the latency test (latency:)"},
		{"frame_sizes: [64]\n", "agents: name senders and receivers, or give a tag selector"},
		{base, "frame_sizes: missing"},
		{"", "campaign spec: empty"},
		{base + "frame_sizes: [64\n", "campaign spec: yaml"},
	} {
		_, err := Parse([]byte(tc.spec))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("spec:\n%s\nerror %v\nwant it to contain %q", tc.spec, err, tc.want)
		}
	}
}
