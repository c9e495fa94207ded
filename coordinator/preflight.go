package coordinator

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/linerate/linerate/doctor"
	"github.com/linerate/linerate/internal/enum"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// Preflight is what a run does with its hosts' checks (doctor), which
// every agent makes at Describe for the run: a run's spec, --preflight and
// a campaign's preflight: give it.
type Preflight string

// Preflight modes of a run.
const (
	// PreflightWarn (the default): every WARN and FAIL is a warning of
	// the result; the run goes on.
	PreflightWarn Preflight = "warn"
	// PreflightStrict: a FAIL on any host refuses the run before any
	// lease, naming each host, check, evidence and fix.
	PreflightStrict Preflight = "strict"
	// PreflightFix: the fixes of every check that is not a PASS and has a
	// fix class are applied at Tune, those of the classes each agent's
	// --allow-fixes allows (the others are a warning per host), journaled
	// with the IRQs and restored with them at the run's end.
	PreflightFix Preflight = "fix"
)

// Preflights lists the modes, the default first: the one list every
// validator, error and flag help says.
var Preflights = []Preflight{PreflightWarn, PreflightStrict, PreflightFix}

// Check is nil when p is one of Preflights; otherwise it names p and the
// valid modes, for the caller to prefix with its field.
func (p Preflight) Check() error {
	if slices.Contains(Preflights, p) {
		return nil
	}
	return fmt.Errorf("%q: valid preflight modes are %s", p, enum.And(Preflights))
}

// checkPreflight fills the preflight's default and refuses an unknown one.
func (s *Spec) checkPreflight() error {
	if s.Preflight == "" {
		s.Preflight = PreflightWarn
	}
	if err := s.Preflight.Check(); err != nil {
		return fmt.Errorf("preflight %w", err)
	}
	return nil
}

// checkRequest is the Describe that asks n's agent for its checks for
// this run: the frame size, the run's test addresses, the irqbalance
// policy and n's part in the run.
func (st *runState) checkRequest(n *node) *lineratev1.DescribeRequest {
	return &lineratev1.DescribeRequest{
		FrameSize: int32(st.largestFrame()), Addrs: st.testAddrs(), Irqbalance: string(st.spec.IRQBalance), Role: string(n.role),
		Backend: string(st.spec.Backend), Method: string(st.spec.Method), OneClock: st.oneClock(),
	}
}

// oneClock is true when every delay the run times is on one clock: round
// trips, no latency, or hosts that all run one kernel (one boot id).
func (st *runState) oneClock() bool {
	if st.spec.Latency == LatencyRTT || st.spec.Latency == LatencyOff {
		return true
	}
	boot := ""
	for _, n := range st.order {
		c := n.host.Clock
		if c == nil || c.BootID == "" || boot != "" && c.BootID != boot {
			return false
		}
		boot = c.BootID
	}
	return boot != ""
}

// largestFrame is the largest frame the run sends, with the FCS.
func (st *runState) largestFrame() int {
	size := st.spec.FrameSize
	for _, e := range st.spec.IMIX {
		size = max(size, e.Size)
	}
	return size
}

// testAddrs are the data addresses of every host of the run, in run order.
func (st *runState) testAddrs() []string {
	var out []string
	for _, n := range st.order {
		if a := dataAddr(n.nic.dataIPs, st.spec.IPv6); a.IsValid() && !slices.Contains(out, a.String()) {
			out = append(out, a.String())
		}
	}
	return out
}

// preflight asks n for its checks for this run and records them in its
// host; checks that could not run are a warning of the host.
func (st *runState) preflight(ctx context.Context, n *node) error {
	d, err := unary(ctx, st, "describe (preflight)", n.c.Describe, st.checkRequest(n))
	if err != nil {
		return err
	}
	checksInto(n.host, d)
	n.allowFixes = d.GetAllowedFixes()
	return nil
}

// judgePreflight puts every WARN and FAIL in the result's warnings (not a
// KNOWN: doctor.Status.Warns) and, with PreflightStrict, refuses the run
// on any FAIL (before any lease).
func (st *runState) judgePreflight() error {
	var fails []string
	for _, n := range st.order {
		for _, c := range n.host.Checks {
			if !c.Status.Warns() {
				continue
			}
			st.res.Warnings = append(st.res.Warnings, CheckWarning(n.host.Name, c))
			if c.Status == doctor.Fail {
				fails = append(fails, checkFailure(n.host.Name, c))
			}
		}
	}
	st.unallowedFixWarnings()
	if st.spec.Preflight != PreflightStrict || len(fails) == 0 {
		return nil
	}
	return &failure{phase: PhaseDescribe, err: fmt.Errorf("--preflight strict: %d check(s) FAIL, so the run is not started (no host was leased):\n%s",
		len(fails), strings.Join(fails, "\n"))}
}

// checkWarning is a WARN or FAIL as one line of a result's warnings.
func CheckWarning(host string, c doctor.Check) string {
	w := fmt.Sprintf("%s: check %s %s: %s", host, c.ID, c.Status, firstEvidence(c))
	if c.Fix != "" {
		w += " (fix: " + c.Fix + ")"
	}
	return w
}

// OtherWarnings are r's warnings but those of its hosts' checks
// (CheckWarning of each WARN and FAIL): what a report that shows the
// checks themselves still has to say, and what a run's own test judges.
func (r *Result) OtherWarnings() []string {
	var shown []string
	for _, h := range r.Hosts {
		for _, c := range h.Checks {
			if c.Status.Warns() {
				shown = append(shown, CheckWarning(h.Name, c))
			}
		}
	}
	var out []string
	for _, w := range r.Warnings {
		if !slices.Contains(shown, w) {
			out = append(out, w)
		}
	}
	return out
}

// checkFailure is a FAIL as strict's refusal names it: the host, the
// check, every item of its evidence and its fix.
func checkFailure(host string, c doctor.Check) string {
	s := fmt.Sprintf("  %s: %s: %s", host, c.ID, strings.Join(c.Evidence, "; "))
	if c.Fix != "" {
		s += "; fix: " + c.Fix
	}
	return s
}

func firstEvidence(c doctor.Check) string {
	if len(c.Evidence) == 0 {
		return "no evidence"
	}
	return c.Evidence[0]
}

// fixClasses are the classes --preflight fix asks n to apply: those of
// its checks that warn and that its agent allows, in doctor's order.
func (st *runState) fixClasses(n *node) []string {
	var out []string
	for _, c := range st.neededFixes(n) {
		if slices.Contains(n.allowFixes, c) {
			out = append(out, c)
		}
	}
	return out
}

// neededFixes are the classes of n's checks that warn (a KNOWN is
// accepted as it is), in doctor's order, with --preflight fix (none
// otherwise).
func (st *runState) neededFixes(n *node) []string {
	if st.spec.Preflight != PreflightFix {
		return nil
	}
	var out []string
	for _, c := range doctor.FixClasses {
		for _, ch := range n.host.Checks {
			if ch.Status.Warns() && ch.FixClass == c && !slices.Contains(out, string(c)) {
				out = append(out, string(c))
			}
		}
	}
	return out
}

// unallowedFixWarnings say, per host, each class --preflight fix would
// apply that its agent does not allow: the run goes on with that check
// unfixed.
func (st *runState) unallowedFixWarnings() {
	for _, n := range st.order {
		for _, c := range st.neededFixes(n) {
			if !slices.Contains(n.allowFixes, c) {
				st.res.Warnings = append(st.res.Warnings, fmt.Sprintf("%s: %s not fixed: its agent's --allow-fixes does not allow it", n.host.Name, c))
			}
		}
	}
}

// settle reads n's checks again after --preflight fix changed some of its
// settings: they are the baseline the re-read after the traffic compares
// with (the fix changed them, not the run), and their facts are those the
// run runs under. A host that cannot answer keeps the checks read before
// the fixes, with a warning.
func (st *runState) settle(ctx context.Context, n *node) {
	if len(n.host.Fixed) == 0 {
		return
	}
	d, err := unary(ctx, st, "describe (preflight, after the fixes)", n.c.Describe, st.checkRequest(n))
	if err != nil {
		n.host.Warnings = append(n.host.Warnings, fmt.Sprintf("its checks could not be read again after the fixes: %v (the facts are those read before them)", err))
		return
	}
	n.settled = checksOf(d)
	if f := factsOf(d); f != nil {
		n.host.Facts = f
	}
}

// reread reads n's volatile checks again after the traffic: a verdict or
// evidence that changed during the run (irqbalance moving an IRQ back, a
// governor changed) is a warning of the result (rereadWarnings). A host that cannot answer
// is a warning too, never a failure of the run it measured.
func (st *runState) reread(ctx context.Context, n *node) error {
	if len(n.host.Checks) == 0 {
		return nil
	}
	d, err := unary(ctx, st, "describe (preflight, after the traffic)", n.c.Describe, st.checkRequest(n))
	if err != nil {
		n.changed = []string{fmt.Sprintf("its checks could not be read again after the traffic: %v", err)}
		return nil
	}
	n.changed = volatileChanges(n.baseline(), checksOf(d))
	return nil
}

// baseline are the checks the re-read after the traffic compares with:
// those read after the fixes, else those read before the run without the
// checks of a class that was fixed (the fix changed them, not the run).
func (n *node) baseline() []doctor.Check {
	if n.settled != nil {
		return n.settled
	}
	if len(n.host.Fixed) == 0 {
		return n.host.Checks
	}
	var out []doctor.Check
	for _, c := range n.host.Checks {
		if !slices.ContainsFunc(n.host.Fixed, func(a doctor.Applied) bool { return a.Class == c.FixClass }) {
			out = append(out, c)
		}
	}
	return out
}

// rereadWarnings put what reread found on each host in the result's
// warnings, in run order.
func (st *runState) rereadWarnings() {
	for _, n := range st.order {
		for _, w := range n.changed {
			st.res.Warnings = append(st.res.Warnings, n.host.Name+": "+w)
		}
	}
}

// volatileChanges says, for each volatile check of before, how after
// differs: its verdict or its evidence.
func volatileChanges(before, after []doctor.Check) []string {
	var out []string
	for _, b := range before {
		if !b.Volatile {
			continue
		}
		i := slices.IndexFunc(after, func(c doctor.Check) bool { return c.ID == b.ID })
		switch {
		case i < 0:
			out = append(out, fmt.Sprintf("check %s could not be read again after the traffic", b.ID))
		case after[i].Status != b.Status:
			out = append(out, fmt.Sprintf("check %s changed during the run: %s before, %s after: %s", b.ID, b.Status, after[i].Status, firstEvidence(after[i])))
		case !slices.Equal(after[i].Evidence, b.Evidence):
			out = append(out, fmt.Sprintf("check %s changed during the run (%s both times): %s", b.ID, b.Status, changedEvidence(b.Evidence, after[i].Evidence)))
		}
	}
	return out
}

// changedEvidence is the first item of after that before did not have,
// with the item it replaced.
func changedEvidence(before, after []string) string {
	for i, a := range after {
		if !slices.Contains(before, a) {
			if i < len(before) {
				return fmt.Sprintf("%q, was %q", a, before[i])
			}
			return fmt.Sprintf("%q, new", a)
		}
	}
	return fmt.Sprintf("%d items, were %d", len(after), len(before))
}
