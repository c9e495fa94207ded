package coordinator

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linerate/linerate/doctor"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// irqbalanceFail is the check an agent whose host runs irqbalance answers.
var irqbalanceFail = &lineratev1.HostCheck{
	Id: "irqbalance", Title: "irqbalance", Status: "FAIL", Volatile: true,
	Evidence: []string{"/proc/812/comm: irqbalance (running)", "/etc/default/irqbalance: no IRQBALANCE_BANNED_CPULIST"},
	Why:      "irqbalance moves the queue IRQs the run pinned.", Fix: "systemctl stop irqbalance",
}

func passCheck(id string) *lineratev1.HostCheck {
	return &lineratev1.HostCheck{Id: id, Status: "PASS", Evidence: []string{id + ": fine"}}
}

// --preflight strict refuses to start on a FAIL, before any lease,
// naming each host, check, evidence and fix; every host's checks are in
// the result, and the Describe asked for them carried the run's options.
func TestRunPreflightStrict(t *testing.T) {
	s1 := sender("s1", "198.18.0.1", 100, "198.18.0.1", "198.18.0.1")
	r1 := receiver("r1", "198.18.0.101")
	r2 := receiver("r2", "198.18.0.102")
	s1.checks = func(int) []*lineratev1.HostCheck { return []*lineratev1.HostCheck{irqbalanceFail, passCheck("mtu")} }
	r1.checks = func(int) []*lineratev1.HostCheck {
		return []*lineratev1.HostCheck{passCheck("irqbalance"), passCheck("mtu")}
	}
	r2.checks = func(int) []*lineratev1.HostCheck {
		return []*lineratev1.HostCheck{irqbalanceFail, {Id: "mtu", Status: "WARN", Evidence: []string{"/sys/class/net/eth1/mtu: 1500"}, Fix: "ip link set eth1 mtu 9000"}}
	}
	c := newFakeCluster(t, s1, r1, r2)
	spec := Spec{Senders: []string{"s1"}, Receivers: []string{"r1", "r2"}, Pattern: FanOut, Count: 100, FrameSize: 1518, Drain: time.Millisecond, Preflight: PreflightStrict}
	wire(spec, c)
	res, err := (&Runner{Cluster: c, Dial: c.dial}).Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusFailed || res.FailedPhase != PhaseDescribe {
		t.Fatalf("status %s, phase %s: %s", res.Status, res.FailedPhase, res.Error)
	}
	for _, want := range []string{
		"--preflight strict: 2 check(s) FAIL, so the run is not started (no host was leased)",
		"  s1: irqbalance: /proc/812/comm: irqbalance (running); /etc/default/irqbalance: no IRQBALANCE_BANNED_CPULIST; fix: systemctl stop irqbalance",
		"  r2: irqbalance: /proc/812/comm: irqbalance (running);",
	} {
		if !strings.Contains(res.Error, want) {
			t.Errorf("error lacks %q:\n%s", want, res.Error)
		}
	}
	if strings.Contains(res.Error, "mtu") {
		t.Errorf("a WARN is named among the FAILs:\n%s", res.Error)
	}
	for _, a := range []*fakeAgent{s1, r1, r2} {
		if a.called("AcquireLease") {
			t.Errorf("%s was leased", a.name)
		}
	}
	if len(res.Hosts) != 3 || len(res.Hosts[2].Checks) != 2 || res.Hosts[2].Checks[1].Status != doctor.Warn {
		t.Errorf("hosts' checks %+v", res.Hosts)
	}
	if !slices.Contains(res.Warnings, "r2: check mtu WARN: /sys/class/net/eth1/mtu: 1500 (fix: ip link set eth1 mtu 9000)") {
		t.Errorf("warnings %q: want r2's WARN", res.Warnings)
	}
	d := s1.describes[len(s1.describes)-1]
	if d.FrameSize != 1518 || d.Role != "sender" || !slices.Equal(d.Addrs, []string{"198.18.0.1", "198.18.0.101", "198.18.0.102"}) {
		t.Errorf("s1's preflight Describe %v: want the run's frame size, s1's role and every host's address", d)
	}
	// The fakes share one boot id: every delay is on one clock.
	if d.Backend != "auto" || d.Method != "auto" || !d.OneClock {
		t.Errorf("s1's preflight Describe %v: want backend and method auto, one clock", d)
	}

	// warn (the default) runs on the same FAILs, each a warning.
	spec.Preflight = ""
	for _, a := range []*fakeAgent{s1, r1, r2} {
		a.expect = nil
	}
	wire(spec, c)
	res, _ = (&Runner{Cluster: c, Dial: c.dial}).Run(context.Background(), spec)
	if res.Status != StatusOK || !slices.Contains(res.Warnings, "s1: check irqbalance FAIL: /proc/812/comm: irqbalance (running) (fix: systemctl stop irqbalance)") {
		t.Errorf("warn: %s %s, warnings %q", res.Status, res.Error, res.Warnings)
	}
}

// --preflight fix sends the fix classes of the checks that are not a PASS
// with Tune (fix_only on a host whose IRQs are not tuned) and records what
// was fixed and that the release restored it.
func TestRunPreflightFix(t *testing.T) {
	s1, r1 := fixPair()
	s1.checks = func(int) []*lineratev1.HostCheck {
		return []*lineratev1.HostCheck{
			{Id: "steering", Status: "WARN", FixClass: "rps", Evidence: []string{"rps_cpus: 3"}},
			{Id: "governor", Status: "FAIL", FixClass: "governor", Evidence: []string{"powersave"}},
			{Id: "flow-control", Status: "PASS", FixClass: "flow-control"},
		}
	}
	r1.checks = func(int) []*lineratev1.HostCheck {
		return []*lineratev1.HostCheck{{Id: "steering", Status: "WARN", FixClass: "rps", Evidence: []string{"rps_cpus: 3"}}}
	}
	rps := &lineratev1.HostFix{Class: "rps", Kind: "file", Key: "/sys/class/net/eth1/queues/rx-0/rps_cpus", From: "3", To: "0"}
	s1.fixed, r1.fixed = []*lineratev1.HostFix{rps}, []*lineratev1.HostFix{rps}
	s1.allowFixes, r1.allowFixes = allFixes(), allFixes()
	res, c, spec := runFix(t, s1, r1)
	if len(s1.tunes) != 1 || !slices.Equal(s1.tunes[0].FixClasses, []string{"governor", "rps"}) || s1.tunes[0].FixOnly {
		t.Errorf("s1's tunes %v: want one, the IRQs and governor, rps", s1.tunes)
	}
	if len(r1.tunes) != 1 || !slices.Equal(r1.tunes[0].FixClasses, []string{"rps"}) || !r1.tunes[0].FixOnly {
		t.Errorf("r1's tunes %v: want one, fix_only rps (its NIC has no queue IRQs)", r1.tunes)
	}
	for _, h := range res.Hosts {
		if len(h.Fixed) != 1 || h.Fixed[0].To != "0" || h.Fixed[0].Setting.Key != rps.Key || !h.FixesRestored {
			t.Errorf("%s: fixed %+v, restored %v", h.Name, h.Fixed, h.FixesRestored)
		}
	}

	// Without fix: no class is sent, and a host without queue IRQs is
	// not tuned at all.
	spec.Preflight = PreflightWarn
	s1.tunes, r1.tunes, r1.expect = nil, nil, nil
	wire(spec, c)
	if res, _ := (&Runner{Cluster: c, Dial: c.dial}).Run(context.Background(), spec); res.Status != StatusOK || len(s1.tunes) != 1 || len(s1.tunes[0].FixClasses) != 0 || len(r1.tunes) != 0 {
		t.Errorf("warn: %s, s1 tunes %v, r1 tunes %v", res.Status, s1.tunes, r1.tunes)
	}
}

// fixPair are a sender with one queue IRQ and a receiver without any,
// for a run with --preflight fix (runFix).
func fixPair() (s1, r1 *fakeAgent) {
	s1, r1 = sender("s1", "198.18.0.1", 100, "198.18.0.1"), receiver("r1", "198.18.0.101")
	s1.queueCPUs = []int32{0}
	return s1, r1
}

// runFix runs s1 to r1 with --preflight fix; the run must succeed. It
// gives the cluster and spec too, for a test's next run.
func runFix(t *testing.T, s1, r1 *fakeAgent) (*Result, *fakeCluster, Spec) {
	t.Helper()
	c := newFakeCluster(t, s1, r1)
	spec := Spec{Senders: []string{"s1"}, Receivers: []string{"r1"}, Count: 100, Drain: time.Millisecond, Preflight: PreflightFix}
	wire(spec, c)
	res, err := (&Runner{Cluster: c, Dial: c.dial}).Run(context.Background(), spec)
	if err != nil || res.Status != StatusOK {
		t.Fatalf("%v %s %s", err, res.Status, res.Error)
	}
	return res, c, spec
}

// allFixes are every fix class, as an agent that allows all answers.
func allFixes() []string {
	var out []string
	for _, c := range doctor.FixClasses {
		out = append(out, string(c))
	}
	return out
}

// --preflight fix sends each host only the classes its agent allows and
// names the others per host as a warning, the run going on; a fixed
// setting the release skipped is not restored.
func TestRunPreflightFixAllowed(t *testing.T) {
	s1, r1 := fixPair()
	rings := &lineratev1.HostCheck{Id: "rings", Status: "WARN", FixClass: "rings", Evidence: []string{"rx 256/4096"}}
	s1.checks = func(int) []*lineratev1.HostCheck {
		return []*lineratev1.HostCheck{{Id: "steering", Status: "WARN", FixClass: "rps", Evidence: []string{"rps_cpus: 3"}}, rings}
	}
	r1.checks = func(int) []*lineratev1.HostCheck { return []*lineratev1.HostCheck{rings} }
	rps := &lineratev1.HostFix{Class: "rps", Kind: "file", Key: "/sys/class/net/eth1/queues/rx-0/rps_cpus", From: "3", To: "0"}
	s1.fixed, s1.allowFixes, s1.restoreSkips = []*lineratev1.HostFix{rps}, []string{"rps"}, []string{rps.Key}
	res, _, _ := runFix(t, s1, r1)
	if len(s1.tunes) != 1 || !slices.Equal(s1.tunes[0].FixClasses, []string{"rps"}) {
		t.Errorf("s1's tunes %v: want rps only", s1.tunes)
	}
	if len(r1.tunes) != 0 {
		t.Errorf("r1's tunes %v: want none (no queue IRQs, no class allowed)", r1.tunes)
	}
	for _, w := range []string{
		"s1: rings not fixed: its agent's --allow-fixes does not allow it",
		"r1: rings not fixed: its agent's --allow-fixes does not allow it",
	} {
		if !slices.Contains(res.Warnings, w) {
			t.Errorf("warnings %q: want %q", res.Warnings, w)
		}
	}
	if h := res.Hosts[0]; len(h.Fixed) != 1 || h.FixesRestored {
		t.Errorf("s1: fixed %+v, restored %v: want not restored (its release skipped the setting)", h.Fixed, h.FixesRestored)
	}
}

// After --preflight fix the checks are read again: a volatile check the
// fix changed is no change during the run (the baseline is the re-read,
// not the checks before the fix), and the facts are those the run ran
// under. A change after the fix still is one.
func TestRunPreflightFixSettles(t *testing.T) {
	s1, r1 := fixPair()
	s1.allowFixes = allFixes()
	s1.checks = func(int) []*lineratev1.HostCheck {
		gov := &lineratev1.HostCheck{Id: "governor", Status: "WARN", Volatile: true, FixClass: "governor", Evidence: []string{"cpu0 scaling_governor: powersave"}}
		irqb := &lineratev1.HostCheck{Id: "irqbalance", Status: "PASS", Volatile: true, Evidence: []string{"no irqbalance process"}}
		if s1.called("Tune") { // after the fix
			gov = &lineratev1.HostCheck{Id: "governor", Status: "PASS", Volatile: true, FixClass: "governor", Evidence: []string{"cpu0 scaling_governor: performance"}}
		}
		if s1.called("Start") {
			irqb = &lineratev1.HostCheck{Id: "irqbalance", Status: "FAIL", Volatile: true, Evidence: []string{"/proc/977/comm: irqbalance (running)"}}
		}
		return []*lineratev1.HostCheck{gov, irqb}
	}
	s1.facts = func(int) *lineratev1.HostFacts {
		if s1.called("Tune") {
			return &lineratev1.HostFacts{Governor: "performance"}
		}
		return &lineratev1.HostFacts{Governor: "powersave"}
	}
	s1.fixed = []*lineratev1.HostFix{{Class: "governor", Kind: "file", Key: "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", From: "powersave", To: "performance"}}
	res, _, _ := runFix(t, s1, r1)
	var changed []string
	for _, w := range res.Warnings {
		if strings.Contains(w, "during the run") {
			changed = append(changed, w)
		}
	}
	want := []string{"s1: check irqbalance changed during the run: PASS before, FAIL after: /proc/977/comm: irqbalance (running)"}
	if !slices.Equal(changed, want) {
		t.Errorf("changes %q\nwant %q", changed, want)
	}
	if f := res.Hosts[0].Facts; f == nil || f.Governor != "performance" {
		t.Errorf("s1's facts %+v: want the governor the run ran under, performance", f)
	}
	if !res.Hosts[0].FixesRestored {
		t.Errorf("s1: fixes not restored")
	}
	// The checks before the fix stay the host's (what the report shows).
	if res.Hosts[0].Checks[0].Status != doctor.Warn {
		t.Errorf("s1's checks %+v: want those before the fix", res.Hosts[0].Checks)
	}
}

// The volatile checks are read again after the traffic: a verdict or an
// evidence that changed is a warning of the result; a check that is not
// volatile, or did not change, is none.
func TestRunPreflightReread(t *testing.T) {
	s1 := sender("s1", "198.18.0.1", 100, "198.18.0.1")
	r1 := receiver("r1", "198.18.0.101")
	s1.checks = func(int) []*lineratev1.HostCheck {
		irqb := &lineratev1.HostCheck{Id: "irqbalance", Status: "PASS", Volatile: true, Evidence: []string{"/proc/*/comm: no irqbalance process"}}
		gov := &lineratev1.HostCheck{Id: "governor", Status: "PASS", Volatile: true, Evidence: []string{"cpu2 scaling_governor: performance"}}
		mtu := &lineratev1.HostCheck{Id: "mtu", Status: "PASS", Evidence: []string{"mtu: 1500"}}
		if s1.called("Start") { // after the traffic
			irqb = &lineratev1.HostCheck{Id: "irqbalance", Status: "FAIL", Volatile: true, Evidence: []string{"/proc/977/comm: irqbalance (running)"}}
			gov = &lineratev1.HostCheck{Id: "governor", Status: "PASS", Volatile: true, Evidence: []string{"cpu2 scaling_governor: schedutil"}}
			mtu = &lineratev1.HostCheck{Id: "mtu", Status: "PASS", Evidence: []string{"mtu: 9000"}}
		}
		return []*lineratev1.HostCheck{irqb, gov, mtu}
	}
	r1.checks = func(int) []*lineratev1.HostCheck {
		return []*lineratev1.HostCheck{{Id: "irqbalance", Status: "PASS", Volatile: true, Evidence: []string{"none"}}}
	}
	c := newFakeCluster(t, s1, r1)
	spec := Spec{Senders: []string{"s1"}, Receivers: []string{"r1"}, Count: 100, Drain: time.Millisecond}
	wire(spec, c)
	res, err := (&Runner{Cluster: c, Dial: c.dial}).Run(context.Background(), spec)
	if err != nil || res.Status != StatusOK {
		t.Fatalf("%v %s %s", err, res.Status, res.Error)
	}
	want := []string{
		"s1: check irqbalance changed during the run: PASS before, FAIL after: /proc/977/comm: irqbalance (running)",
		`s1: check governor changed during the run (PASS both times): "cpu2 scaling_governor: schedutil", was "cpu2 scaling_governor: performance"`,
	}
	var got []string
	for _, w := range res.Warnings {
		if strings.Contains(w, "during the run") || strings.Contains(w, "again") {
			got = append(got, w)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("warnings %q\nwant %q", got, want)
	}
	withOptions := 0
	for _, d := range s1.describes {
		if d.Role == "sender" && d.FrameSize == 64 {
			withOptions++
		}
	}
	if withOptions != 2 {
		t.Errorf("s1's Describes %v: want two with the run's options, before and after the traffic", s1.describes)
	}
}

// One clock: round trips, no latency, or every host on one boot id; a
// host of another kernel, or one whose clock is unknown, is not.
func TestPreflightOneClock(t *testing.T) {
	hosts := func(boots ...string) []*node {
		var out []*node
		for _, b := range boots {
			h := &Host{}
			if b != "?" {
				h.Clock = &Clock{BootID: b}
			}
			out = append(out, &node{host: h})
		}
		return out
	}
	for _, tc := range []struct {
		latency LatencyMode
		order   []*node
		want    bool
	}{
		{LatencyOneWay, hosts("a", "a", "a"), true},
		{LatencyOneWay, hosts("a", "b"), false},
		{LatencyOneWay, hosts("a", "?"), false},
		{LatencyOneWay, hosts("", ""), false},
		{LatencyRTT, hosts("a", "b"), true},
		{LatencyOff, hosts("a", "b"), true},
	} {
		st := &runState{spec: Spec{Latency: tc.latency}, order: tc.order}
		if got := st.oneClock(); got != tc.want {
			t.Errorf("latency %s, %d hosts: one clock %v, want %v", tc.latency, len(tc.order), got, tc.want)
		}
	}
}

// When the checks could not be read again after the fixes, the re-read
// after the traffic compares with those before the run without the
// checks of a fixed class: the fix changed them, not the run.
func TestBaselineWithoutSettle(t *testing.T) {
	gov := doctor.Check{ID: "governor", Status: doctor.Warn, FixClass: doctor.FixGovernor, Volatile: true}
	irqb := doctor.Check{ID: "irqbalance", Status: doctor.Pass, Volatile: true}
	n := &node{host: &Host{Checks: []doctor.Check{gov, irqb}}}
	if got := n.baseline(); len(got) != 2 {
		t.Errorf("nothing fixed: baseline %v, want both checks", got)
	}
	n.host.Fixed = []doctor.Applied{{Class: doctor.FixGovernor}}
	if got := n.baseline(); len(got) != 1 || got[0].ID != "irqbalance" {
		t.Errorf("governor fixed: baseline %v, want irqbalance only", got)
	}
	n.settled = []doctor.Check{{ID: "governor", Status: doctor.Pass, Volatile: true}}
	if got := n.baseline(); len(got) != 1 || got[0].ID != "governor" {
		t.Errorf("read again after the fixes: baseline %v, want that read", got)
	}
}

// A KNOWN (a WARN the agent's --known-check accepts) is recorded with the
// host's checks, as its agent answered it, but is no warning of the run,
// and --preflight fix leaves it as it is; a WARN beside it still is a
// warning, and still fixed.
func TestRunPreflightKnown(t *testing.T) {
	s1, r1 := fixPair()
	clock := &lineratev1.HostCheck{Id: "clock", Status: "KNOWN", Evidence: []string{"adjtimex: synchronised false", "known to this host's operator (--known-check): the run measures offsets"}}
	known := &lineratev1.HostCheck{Id: "steering", Status: "KNOWN", FixClass: "rps", Evidence: []string{"rps_cpus: 3", "known to this host's operator (--known-check): on purpose"}}
	s1.checks = func(int) []*lineratev1.HostCheck { return []*lineratev1.HostCheck{clock, known} }
	r1.checks = func(int) []*lineratev1.HostCheck {
		return []*lineratev1.HostCheck{clock, {Id: "steering", Status: "WARN", FixClass: "rps", Evidence: []string{"rps_cpus: 3"}}}
	}
	s1.allowFixes, r1.allowFixes = allFixes(), allFixes()
	r1.fixed = []*lineratev1.HostFix{{Class: "rps", Kind: "file", Key: "/sys/class/net/eth1/queues/rx-0/rps_cpus", From: "3", To: "0"}}
	res, _, _ := runFix(t, s1, r1)
	if want := []string{"r1: check steering WARN: rps_cpus: 3"}; !slices.Equal(res.Warnings, want) {
		t.Errorf("warnings %q, want only r1's WARN %q", res.Warnings, want)
	}
	if h := res.Hosts[0]; len(h.Checks) != 2 || h.Checks[0].Status != doctor.Known || h.Checks[1].Status != doctor.Known {
		t.Errorf("s1's checks %+v: want both KNOWN, as its agent said", h.Checks)
	}
	if len(s1.tunes) != 1 || len(s1.tunes[0].FixClasses) != 0 {
		t.Errorf("s1's tunes %v: want the IRQs only, its KNOWN steering not fixed", s1.tunes)
	}
	if len(r1.tunes) != 1 || !slices.Equal(r1.tunes[0].FixClasses, []string{"rps"}) {
		t.Errorf("r1's tunes %v: want rps for its WARN", r1.tunes)
	}
}
