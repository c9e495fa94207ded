package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/linerate/linerate/coordinator"
	"github.com/linerate/linerate/coordinator/results/resultstest"
	"github.com/linerate/linerate/doctor"
	"github.com/linerate/linerate/topology"
)

// The run's text report lists every WARN and FAIL per host in its
// PREFLIGHT section, once: the result's warning of each is not repeated
// below it; what --preflight fix changed is listed with whether the
// release restored it.
func TestRunTablePreflight(t *testing.T) {
	doc := resultstest.Run()
	res := doc.Run
	res.Hosts[0].Fixed = []doctor.Applied{{Class: doctor.FixRPS, Setting: topology.Setting{Kind: topology.KindFile, Key: "/sys/class/net/eth1/queues/rx-0/rps_cpus"}, From: "3", To: "0"}}
	res.Hosts[0].FixesRestored = true
	var b bytes.Buffer
	if err := RunTable(&b, res); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range missingFrom(out,
		"PREFLIGHT  CHECK         STATUS  EVIDENCE",
		"s2         governor      WARN    /sys/devices/system/cpu/cpu2/cpufreq/scaling_governor: powersave (+1 more)  echo performance",
		"r2         flow-control  FAIL    ethtool -a eth1: autoneg on, rx on, tx on",
		"FIXED  CLASS  SETTING                                        FROM  TO  RESTORED",
		"s1     rps    file /sys/class/net/eth1/queues/rx-0/rps_cpus  3     0   yes",
	) {
		t.Errorf("run table lacks %q:\n%s", want, out)
	}
	if strings.Contains(out, "warning: r2: check flow-control") || strings.Count(out, "flow-control") != 1 {
		t.Errorf("the FAIL is repeated as a warning:\n%s", out)
	}
}

// Every check passed: one line says so; no host checked (agents that
// predate the checks): nothing.
func TestRunTablePreflightPassed(t *testing.T) {
	res := allPassed()
	var b bytes.Buffer
	_ = RunTable(&b, res)
	if out := b.String(); !strings.Contains(out, "\npreflight: all 12 checks passed on 4 hosts\n") || strings.Contains(out, "PREFLIGHT") {
		t.Errorf("all passed:\n%s", out)
	}
	for i := range res.Hosts {
		res.Hosts[i].Checks = nil
	}
	b.Reset()
	_ = RunTable(&b, res)
	if out := b.String(); strings.Contains(strings.ToLower(out), "preflight") {
		t.Errorf("no checks, yet:\n%s", out)
	}
}

// The HTML report shows the same as a table, a row per WARN and FAIL,
// and not again among the warnings; every check passed is one line.
func TestHTMLPreflight(t *testing.T) {
	doc := resultstest.Run()
	var b bytes.Buffer
	if err := HTML(&b, doc); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range missingFrom(out,
		`<section id="preflight">`,
		`<tr class="WARN" data-host="s2" data-check="governor"><td>s2</td><td>governor</td><td>WARN</td>`,
		`<tr class="FAIL" data-host="r2" data-check="flow-control"><td>r2</td><td>flow-control</td><td>FAIL</td><td><code>ethtool -a eth1: autoneg on, rx on, tx on</code></td><td><code>ethtool -A eth1 autoneg off rx off tx off</code></td></tr>`,
	) {
		t.Errorf("html lacks %q", want)
	}
	if strings.Contains(out, `<p class="warn">r2: check flow-control`) {
		t.Error("the FAIL is repeated among the warnings")
	}
	res := doc.Run
	res.Warnings = nil
	for i := range res.Hosts {
		for j := range res.Hosts[i].Checks {
			res.Hosts[i].Checks[j].Status = doctor.Pass
		}
	}
	b.Reset()
	_ = HTML(&b, doc)
	if out := b.String(); !strings.Contains(out, `<p class="preflight-pass">All 12 checks passed on 4 hosts.</p>`) || strings.Contains(out, `<table class="preflight">`) {
		t.Error("all passed: want one line and no table")
	}
}

// missingFrom are the wants out does not contain.
func missingFrom(out string, wants ...string) []string {
	var missing []string
	for _, w := range wants {
		if !strings.Contains(out, w) {
			missing = append(missing, w)
		}
	}
	return missing
}

// allPassed is resultstest's run with every check a PASS and no warning.
func allPassed() *coordinator.Result {
	res := resultstest.Run().Run
	res.Warnings = nil
	for i := range res.Hosts {
		for j := range res.Hosts[i].Checks {
			res.Hosts[i].Checks[j].Status = doctor.Pass
		}
	}
	return res
}
