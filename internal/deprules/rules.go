// Package deprules checks the import rules of docs/ARCHITECTURE.md's
// package table against the tree, whole: every row of the table is a
// rule (its packages may import what its "may import" column lists, and
// no more), every package of the module has a row, no package imports a
// package of a higher floor, no folder holds packages of two floors, and
// the few rules that hold across rows (Cross) hold. The table is parsed
// from the document itself (ParseTable), so the document and the check
// cannot disagree; the package's tests run it on this tree, so `make
// unit` fails on a forbidden import, and prove that a violation of any
// row fails.
package deprules

// Std is the pattern that matches every standard-library package.
const Std = "std"

// Rule is one import rule over the packages of a module. Patterns are
// import paths, "p/..." matching p and every package below it; a pattern
// whose first element has no dot is relative to the module path (so the
// rules fit any module laid out like this one), Std matches the standard
// library, "..." every package of the module.
type Rule struct {
	// Name says the rule in a few words; violations quote it.
	Name string
	// From are the packages the rule applies to; Except are left out.
	From, Except []string
	// Deny are packages that From must not reach, directly or through
	// other packages, from their code or their tests; DenyExcept are
	// allowed even though Deny matches them.
	Deny, DenyExcept []string
	// Allow, when set, is every package From may import directly from
	// its non-test code; AllowTest adds what its tests may import too.
	Allow, AllowTest []string
}

// controlPlane is what the data plane must never reach.
var controlPlane = []string{
	"agent/...", "coordinator/...", "proto/...", "cmd/...", "internal/cluster/...",
	"github.com/hashicorp/serf/...", "google.golang.org/grpc/...",
}

// Cross are the rules that hold across rows, each named as
// docs/ARCHITECTURE.md says it under the package table: what a package
// must not reach through others too, which a row's direct imports alone
// do not say.
var Cross = []Rule{
	{
		Name: "topology, pktgen and receiver never reach the control plane",
		From: []string{"topology/...", "pktgen/...", "receiver/..."},
		Deny: controlPlane,
	},
	{
		Name:   "nothing outside cmd reaches cmd",
		From:   []string{"..."},
		Except: []string{"cmd/..."},
		Deny:   []string{"cmd/..."},
	},
	{
		// Its tests neither: the scale test, which runs real agents
		// against it, is cmd/linerate/internal/scaletest.
		Name: "the coordinator never reaches the agent, not even in its tests",
		From: []string{"coordinator/..."},
		Deny: []string{"agent/..."},
	},
}

// RulesOf are the rules of a package table: Cross, then one per row.
func RulesOf(rows []Row) []Rule {
	rules := append([]Rule(nil), Cross...)
	for _, r := range rows {
		rules = append(rules, r.Rule())
	}
	return rules
}

// Rule is the row as a rule: its packages import only what it allows.
func (r Row) Rule() Rule {
	return Rule{Name: r.Name(), From: r.Packages, Allow: r.Allow, AllowTest: r.AllowTest}
}
