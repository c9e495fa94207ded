package agent

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/linerate/linerate/internal/fsfixture"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
	"github.com/linerate/linerate/topology"
)

// journalHost is the 4-queue fixture host (eth0, IRQs 41-44) and a state
// dir; pin applies a plan of eth0 with a journal of owner, as a run (or an
// operator's irq apply) that never restored would leave it.
func journalHost(t *testing.T) (root, state string, pin func(owner string)) {
	t.Helper()
	root, state = t.TempDir(), t.TempDir()
	if err := fsfixture.UnpackFile(filepath.Join("..", "topology", "testdata", "apply-basic.tree"), root); err != nil {
		t.Fatal(err)
	}
	return root, state, func(owner string) {
		t.Helper()
		r, err := topology.OpenRoot(root)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		n, err := topology.Inspect(r, "eth0")
		if err != nil {
			t.Fatal(err)
		}
		p, err := topology.MakePlan(n, topology.PlanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := topology.Apply(context.Background(), r, p, topology.ApplyOptions{StateDir: state, IRQBalance: "ignore", RootName: root, Owner: owner}); err != nil {
			t.Fatal(err)
		}
	}
}

// oldJournal writes a journal of iface as linerate wrote them before
// journals had an owner.
func oldJournal(t *testing.T, state, iface string, irq int) {
	t.Helper()
	j := `{"version": 1, "iface": "` + iface + `", "created": "2026-01-02T03:04:05Z",
  "entries": [{"irq": ` + itoa(irq) + `, "name": "` + iface + `-TxRx-0", "file": "smp_affinity_list", "original": "0-7", "cpu": 0}]}`
	if err := os.WriteFile(topology.JournalPath(state, iface), []byte(j), 0o600); err != nil {
		t.Fatal(err)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// An agent at start restores its own journal only (same name and
// interface, or one without an owner on its interface); every other
// journal of the shared state dir stays as it was.
func TestStartRestoresOwnJournalsOnly(t *testing.T) {
	for _, tc := range []struct {
		name     string
		owner    string // of eth0's journal; "-": written before journals had one
		restored bool
	}{
		{"its own", "agent:agent1:eth0", true},
		{"without an owner", "-", true},
		{"an operator's irq apply", topology.OwnerIRQApply, false},
		{"another agent's", "agent:agent2:eth0", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, state, pin := journalHost(t)
			if tc.owner == "-" {
				pin("")
			} else {
				pin(tc.owner)
			}
			oldJournal(t, state, "eth1", 77) // another interface's, no owner
			other, _ := os.ReadFile(topology.JournalPath(state, "eth1"))
			eth0, _ := os.ReadFile(topology.JournalPath(state, "eth0"))
			certs := testCerts(t)
			a := startAgent(t, Config{Name: "agent1", Role: RoleReceiver, Iface: "eth0", Root: root, StateDir: state, AllowMgmtIface: true}, certs)
			if got, _ := os.ReadFile(topology.JournalPath(state, "eth1")); string(got) != string(other) {
				t.Errorf("another interface's journal changed:\n%s", got)
			}
			got, err := os.ReadFile(topology.JournalPath(state, "eth0"))
			if tc.restored {
				if !os.IsNotExist(err) || affinity(t, root, 42) != "0-7\n" {
					t.Errorf("its journal not restored: %v, irq 42 %q", err, affinity(t, root, 42))
				}
				return
			}
			if string(got) != string(eth0) || affinity(t, root, 42) != "1\n" {
				t.Errorf("a journal of %s touched: irq 42 %q, journal\n%s", tc.owner, affinity(t, root, 42), got)
			}
			// Nor does the agent tune over it, nor restore it at the end
			// of a lease.
			c := dial(t, a, certs, "coord")
			ctx := ctxT(t, 10*time.Second)
			l, err := c.AcquireLease(ctx, &lineratev1.AcquireLeaseRequest{CoordinatorId: "c1"})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Tune(ctx, &lineratev1.TuneRequest{LeaseId: l.LeaseId, Irqbalance: "ignore"})
			wantCode(t, err, codes.FailedPrecondition, "tune over another owner's journal")
			if err == nil || !strings.Contains(err.Error(), "was written by \""+tc.owner+"\", not \"agent:agent1:eth0\"") {
				t.Errorf("tune: %v, want the owners named", err)
			}
			rel, err := c.ReleaseLease(ctx, &lineratev1.ReleaseLeaseRequest{LeaseId: l.LeaseId})
			if err != nil || len(rel.Changes) != 0 || len(rel.Warnings) != 1 || !strings.Contains(rel.Warnings[0], "left alone") {
				t.Errorf("release: %v %v, want a warning that the journal was left alone", rel, err)
			}
			if got, _ := os.ReadFile(topology.JournalPath(state, "eth0")); string(got) != string(eth0) || affinity(t, root, 42) != "1\n" {
				t.Errorf("the end of the lease touched a journal of %s", tc.owner)
			}
		})
	}
}
