package topology

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A journal carries its owner. An owner's restore puts back its own
// journal only: another owner's is left alone with a warning, whatever
// restores it; an operator's restore (no owner) restores any. An Apply
// onto another owner's journal is refused, the host and the journal
// unchanged.
func TestJournalOwner(t *testing.T) {
	r, p, state := setup(t)
	agent := AgentOwner("n1", "eth0")
	o := opts(state)
	o.Owner = OwnerIRQApply
	if _, err := Apply(context.Background(), r, p, o); err != nil {
		t.Fatal(err)
	}
	j, err := LoadJournal(state, "eth0")
	if err != nil || j.Owner != "irq apply" {
		t.Fatalf("journal %+v %v, want owner irq apply", j, err)
	}
	pinned := affinities(t, r)
	journal, _ := os.ReadFile(JournalPath(state, "eth0"))

	// The agent's Apply onto the operator's journal: refused, nothing written.
	o.Owner = agent
	before := len(r.writes)
	_, err = Apply(context.Background(), r, p, o)
	if !errors.Is(err, ErrJournalOwner) || !strings.Contains(err.Error(), `was written by "irq apply", not "agent:n1:eth0"`) || len(r.writes) != before {
		t.Errorf("apply onto another owner's journal: %v, %d writes", err, len(r.writes)-before)
	}
	// The agent's restore leaves it alone and says so.
	rr, err := Restore(context.Background(), r, RestoreOptions{StateDir: state, Iface: "eth0", Owner: agent})
	if err != nil || len(rr) != 1 || len(rr[0].Changes) != 0 || rr[0].Owner != OwnerIRQApply ||
		len(rr[0].Warnings) != 1 || !strings.Contains(rr[0].Warnings[0], `was written by "irq apply", not "agent:n1:eth0": left alone`) {
		t.Errorf("restore by another owner: %+v %v", rr, err)
	}
	if got, _ := os.ReadFile(JournalPath(state, "eth0")); string(got) != string(journal) || len(r.writes) != before {
		t.Errorf("another owner's restore touched the journal or the host (%d writes)", len(r.writes)-before)
	}
	if diff := cmp.Diff(pinned, affinities(t, r)); diff != "" {
		t.Errorf("another owner's restore changed affinities (-want +got):\n%s", diff)
	}
	// The operator restores any journal.
	rr, err = Restore(context.Background(), r, RestoreOptions{StateDir: state})
	if err != nil || len(rr) != 1 || rr[0].Owner != OwnerIRQApply || len(rr[0].Changes) != 4 {
		t.Errorf("the operator's restore: %+v %v", rr, err)
	}
	if diff := cmp.Diff(untouched, affinities(t, r)); diff != "" {
		t.Errorf("after the operator's restore (-want +got):\n%s", diff)
	}
}

// A journal without an owner (written before journals had one) is taken
// as the asker's: restored by an owner's restore, taken over by its Apply.
func TestJournalWithoutOwner(t *testing.T) {
	r, p, state := setup(t)
	if _, err := Apply(context.Background(), r, p, opts(state)); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(JournalPath(state, "eth0"))
	if strings.Contains(string(b), `"owner"`) {
		t.Fatalf("a journal without an owner names one:\n%s", b)
	}
	o := opts(state)
	o.Owner = AgentOwner("n1", "eth0")
	if _, err := Apply(context.Background(), r, p, o); err != nil {
		t.Fatal(err)
	}
	if j, _ := LoadJournal(state, "eth0"); j.Owner != "agent:n1:eth0" || len(j.Entries) != 4 || j.Entries[0].Original != "0-7" {
		t.Errorf("taken over: %+v, want the agent's with the first originals", j)
	}
	if err := os.WriteFile(JournalPath(state, "eth0"), b, 0o600); err != nil { // the old journal back
		t.Fatal(err)
	}
	rr, err := Restore(context.Background(), r, RestoreOptions{StateDir: state, Iface: "eth0", Owner: "agent:n1:eth0"})
	if err != nil || len(rr) != 1 || len(rr[0].Changes) != 4 || rr[0].Owner != "" {
		t.Errorf("an owner's restore of an old journal: %+v %v", rr, err)
	}
	if diff := cmp.Diff(untouched, affinities(t, r)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
