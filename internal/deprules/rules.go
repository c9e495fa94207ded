// Package deprules checks the import rules of the package table in
// docs/ARCHITECTURE.md: the data plane (topology, pktgen, receiver) never reaches the
// control plane, nothing imports cmd, receiver takes only pktgen's wire
// format, topology stays on std, x/sys and hclog, cmd/linerate/internal/vm stays a
// leaf, and the coordinator never imports the agent. Check runs `go list` over a module and reports
// every import that breaks a rule; the package's test runs it on this
// tree, so `make unit` fails on a forbidden import.
package deprules

// Std is the pattern that matches every standard-library package.
const Std = "std"

// Rule is one import rule over the packages of a module. Patterns are
// import paths, "p/..." matching p and every package below it; a pattern
// whose first element has no dot is relative to the module path (so the
// rules fit any module laid out like this one), Std matches the standard
// library.
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

// Rules are the import rules of docs/ARCHITECTURE.md's package table.
// hclog is allowed in the data plane: loggers are passed in, the house
// style everywhere, and it is no part of the control plane.
var Rules = []Rule{
	{
		Name: "topology, pktgen and receiver never import the control plane",
		From: []string{"topology/...", "pktgen/...", "receiver/..."},
		Deny: controlPlane,
	},
	{
		Name:   "nothing imports cmd",
		From:   []string{"..."},
		Except: []string{"cmd/..."},
		Deny:   []string{"cmd/..."},
	},
	{
		// Its tests neither: the scale test, which runs real agents
		// against it, is cmd/linerate/internal/scaletest.
		Name: "the coordinator never imports the agent",
		From: []string{"coordinator/..."},
		Deny: []string{"agent/..."},
	},
	{
		Name:       "receiver imports pktgen for the wire format only (the pktgen package, not its backends)",
		From:       []string{"receiver/..."},
		Deny:       []string{"pktgen/..."},
		DenyExcept: []string{"pktgen"},
		Allow: []string{Std, "golang.org/x/sys/...", "github.com/cilium/ebpf/...", "github.com/hashicorp/go-hclog",
			"pktgen", "receiver/...", "internal/bpfasm", "internal/ethtool", "internal/enum"},
		AllowTest: []string{"github.com/google/go-cmp/...", "github.com/vishvananda/netlink/...", "internal/netns/...", "internal/bpftest"},
	},
	{
		Name:      "topology imports only std, x/sys, its own packages and the helpers internal/safefile, ctxsleep and enum",
		From:      []string{"topology/..."},
		Allow:     []string{Std, "golang.org/x/sys/...", "github.com/hashicorp/go-hclog", "topology/...", "internal/safefile", "internal/ctxsleep", "internal/enum"},
		AllowTest: []string{"github.com/google/go-cmp/...", "internal/fsfixture"},
	},
	{
		// The lab (and so the binary) runs guests with it: it stays a
		// leaf, never the control plane nor a test harness.
		Name:      "cmd/linerate/internal/vm imports only std, x/sys, hclog and internal/safefile",
		From:      []string{"cmd/linerate/internal/vm"},
		Allow:     []string{Std, "golang.org/x/sys/...", "github.com/hashicorp/go-hclog", "internal/safefile"},
		AllowTest: []string{"github.com/google/go-cmp/...", "cmd/linerate/internal/vmtest"},
	},
}
