package campaign

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/linerate/linerate/coordinator/search"
)

// labOptions are the options `linerate lab campaign` builds from its
// flags' defaults for a 2×2 lab named x.
func labOptions() Options {
	return Options{
		Name: "lab x", Senders: []string{"s1", "s2"}, Receivers: []string{"r1", "r2"}, Pattern: "pairwise",
		Sizes: []Size{{Bytes: 64}, {Bytes: 512}, {Bytes: 1518}}, Search: search.TypeRFC2544,
		Resolution: Rate{Percent: 1}, Min: Rate{Percent: 1}, Max: Rate{Percent: 100},
		Duration: time.Second, Backend: "auto", Pause: 200 * time.Millisecond, Drain: 300 * time.Millisecond,
	}
}

// TestFromOptionsAsYAML checks that a spec built from flags is the spec the
// YAML text `lab campaign` used to write for them parses to, and that its
// record (the spec as given, stored with the result) is the same JSON.
func TestFromOptionsAsYAML(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  func(*Options)
		yaml string
	}{
		{"defaults", func(*Options) {}, `name: lab x
agents:
  senders: [s1, s2]
  receivers: [r1, r2]
pattern: pairwise
frame_sizes: [64, 512, 1518]
threads: 0
backend: auto
trial_duration: 1s
search:
  type: rfc2544
  loss_goal: 0
  resolution: "1%"
  min_rate: "1%"
  max_rate: "100%"
between_trials:
  pause: 200ms
drain: 300ms
`},
		{"shaped-search", func(o *Options) {
			o.Senders, o.Receivers = []string{"s1"}, []string{"r1"}
			o.Max, o.LossGoal, o.Duration, o.Threads = Rate{Percent: 150}, 0.001, 2*time.Second, 2
			o.Resolution, o.Min = Rate{PPS: 1000}, Rate{PPS: 100000}
			o.Shortfall, o.Backend, o.Pattern = "fail", "afpacket", "fan-in"
		}, `name: lab x
agents:
  senders: [s1]
  receivers: [r1]
pattern: fan-in
frame_sizes: [64, 512, 1518]
threads: 2
backend: afpacket
trial_duration: 2s
search:
  type: rfc2544
  loss_goal: 0.001
  resolution: "1000"
  min_rate: "100000"
  max_rate: "150%"
between_trials:
  pause: 200ms
drain: 300ms
shortfall: fail
`},
		{"sweep", func(o *Options) {
			o.Search, o.Rates, o.Sizes = search.TypeNone, []Rate{{Percent: 10}, {Percent: 50.5}, {PPS: 100000}, {PPS: 1.5e6}}, []Size{{Bytes: 64}}
			o.LossGoal = 0.5 // left out of a sweep, as the YAML did
		}, `name: lab x
agents:
  senders: [s1, s2]
  receivers: [r1, r2]
pattern: pairwise
frame_sizes: [64]
threads: 0
backend: auto
trial_duration: 1s
rates: [10%, 50.5%, 100000, 1.5e6]
search:
  type: none
between_trials:
  pause: 200ms
drain: 300ms
`},
		{"ndr-pdr-imix", func(o *Options) {
			o.Search, o.Sizes, o.Backend = search.TypeNDRPDR, []Size{{Bytes: 64}, {IMIX: true}}, "kernel"
		}, `name: lab x
agents:
  senders: [s1, s2]
  receivers: [r1, r2]
pattern: pairwise
frame_sizes: [64, imix]
threads: 0
backend: kernel
trial_duration: 1s
search:
  type: ndr-pdr
  loss_goal: 0
  resolution: "1%"
  min_rate: "1%"
  max_rate: "100%"
between_trials:
  pause: 200ms
drain: 300ms
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := labOptions()
			tc.opt(&o)
			got, record, err := FromOptions(o)
			if err != nil {
				t.Fatal(err)
			}
			want, err := Parse([]byte(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			want.lines = nil
			if !reflect.DeepEqual(got, want) {
				t.Errorf("from options:\n%+v\nfrom YAML:\n%+v", got, want)
			}
			gotJSON, err := specJSON(record)
			if err != nil {
				t.Fatal(err)
			}
			wantJSON, err := specJSON([]byte(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if string(gotJSON) != string(wantJSON) {
				t.Errorf("record:\n%s\nfrom YAML:\n%s", gotJSON, wantJSON)
			}
		})
	}
}

// TestFromOptionsBadInput checks that options are refused by the spec's own
// validation, naming the spec's field.
func TestFromOptionsBadInput(t *testing.T) {
	for _, tc := range []struct {
		opt  func(*Options)
		want string
	}{
		{func(o *Options) { o.Sizes = []Size{{Bytes: 40}} }, "campaign spec: frame_sizes[0]: 40: want 64-9018 bytes"},
		{func(o *Options) { o.Sizes = nil }, "frame_sizes: missing"},
		{func(o *Options) { o.Pattern = "ring" }, `pattern: "ring": valid patterns are`},
		{func(o *Options) { o.Rates = []Rate{{Percent: 10}} }, "rates: a rfc2544 search finds the rates itself"},
		{func(o *Options) { o.Search = search.TypeNone }, "rates: missing: a sweep"},
		{func(o *Options) { o.Min = Rate{Percent: 100} }, "search.min_rate: 100% is not below max_rate 100%"},
		{func(o *Options) { o.Duration = time.Millisecond }, "trial_duration: 1ms: want 100ms to 1h"},
		{func(o *Options) { o.Sizes = []Size{{IMIX: true}} }, "imix needs backend: kernel"},
	} {
		o := labOptions()
		tc.opt(&o)
		if _, _, err := FromOptions(o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", o, err, tc.want)
		}
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]Size{"64": {Bytes: 64}, " 1518": {Bytes: 1518}, "imix": {IMIX: true}, "IMIX": {IMIX: true}, "40": {Bytes: 40}} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "big", "64.5"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q): want an error", in)
		}
	}
}
