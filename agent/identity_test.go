package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/linerate/linerate/internal/cluster/mtls"
	"github.com/linerate/linerate/internal/fsfixture"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
	"github.com/linerate/linerate/topology"
)

// syncBuffer is a log sink tests read while the agent writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// audits are the audit lines logged so far (JSON fields).
func (s *syncBuffer) audits(t *testing.T) []map[string]any {
	t.Helper()
	s.mu.Lock()
	text := s.b.String()
	s.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		if m["@message"] == "audit" {
			out = append(out, m)
		}
	}
	return out
}

// twoTeams runs a receiver agent on the 4-queue fixture host (eth0, IRQs
// 41-44) with mutual TLS, and dials it as two coordinator certificates of
// its CA, "coord" (team A) and "coord2" (team B). The agent logs JSON
// into the returned buffer.
func twoTeams(t *testing.T, minTTL time.Duration) (a *Agent, teamA, teamB lineratev1.AgentClient, root, state string, logs *syncBuffer) {
	t.Helper()
	root = t.TempDir()
	if err := fsfixture.UnpackFile(filepath.Join("..", "topology", "testdata", "apply-basic.tree"), root); err != nil {
		t.Fatal(err)
	}
	certs, state := testCerts(t), t.TempDir()
	issueIn(t, certs, mtls.LeafOptions{Name: "coord2", Role: mtls.RoleCoordinator})
	logs = &syncBuffer{}
	log := hclog.New(&hclog.LoggerOptions{Name: t.Name(), Level: hclog.Debug, JSONFormat: true, Output: io.MultiWriter(logs, testWriter{t})})
	a = startAgent(t, Config{Name: "agent1", Role: RoleReceiver, Iface: "eth0", Root: root, StateDir: state, MinLeaseTTL: minTTL, AllowMgmtIface: true, Logger: log}, certs)
	return a, dial(t, a, certs, "coord"), dial(t, a, certs, "coord2"), root, state, logs
}

func affinities(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	for irq := 41; irq <= 44; irq++ {
		out = append(out, affinity(t, root, irq))
	}
	return out
}

// leaseAndTune acquires the lease as coordinator (ttl 0: the default) and
// tunes every queue; it returns the lease id.
func leaseAndTune(t *testing.T, ctx context.Context, c lineratev1.AgentClient, coordinator string, ttl time.Duration) string {
	t.Helper()
	req := &lineratev1.AcquireLeaseRequest{CoordinatorId: coordinator}
	if ttl > 0 {
		req.Ttl = durationpb.New(ttl)
	}
	l, err := c.AcquireLease(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Tune(ctx, &lineratev1.TuneRequest{LeaseId: l.LeaseId, Irqbalance: "ignore"}); err != nil {
		t.Fatal(err)
	}
	return l.LeaseId
}

// TestLeaseBoundToCertificate checks, against a real agent over mutual
// TLS, that a second coordinator certificate of the same CA can neither
// take, renew nor release the first's lease, nor drive the agent with its
// lease id; that Describe and Watch show the holder's certificate name and
// never a lease id; and that every state-changing call is audited.
func TestLeaseBoundToCertificate(t *testing.T) {
	_, teamA, teamB, root, _, logs := twoTeams(t, 0)
	ctx := ctxT(t, 20*time.Second)

	leaseID := leaseAndTune(t, ctx, teamA, "teamA/run1", time.Minute)
	tuned := affinities(t, root)
	noLeaseID := func(what string, text string) {
		t.Helper()
		if strings.Contains(text, leaseID) {
			t.Errorf("%s shows the lease id: %s", what, text)
		}
	}

	// Describe: the holder's certificate name and expiry, no lease id.
	d, err := teamB.Describe(ctx, &lineratev1.DescribeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Lease.GetHolder() != "coord" || d.Lease.GetCoordinatorId() != "teamA/run1" || d.Lease.GetGeneration() != 1 || !d.Lease.GetExpiresAt().AsTime().After(time.Now()) {
		t.Errorf("describe lease: %v", d.GetLease())
	}
	noLeaseID("describe", prototext.Format(d))
	// Watch likewise.
	w, err := teamB.Watch(ctx, &lineratev1.WatchRequest{})
	if err != nil {
		t.Fatal(err)
	}
	smp, err := w.Recv()
	if err != nil || smp.Lease.GetHolder() != "coord" || smp.Lease.GetExpiresAt() == nil {
		t.Errorf("watch sample lease: %v %v", smp.GetLease(), err)
	}
	noLeaseID("watch", prototext.Format(smp))

	// Team B cannot take the lease, not even with team A's coordinator_id.
	for _, id := range []string{"teamB/run1", "teamA/run1"} {
		_, err := teamB.AcquireLease(ctx, &lineratev1.AcquireLeaseRequest{CoordinatorId: id})
		wantCode(t, err, codes.AlreadyExists, "team B acquires as "+id)
		if msg := status.Convert(err).Message(); !strings.Contains(msg, `certificate "coord"`) || !strings.Contains(msg, "until 20") {
			t.Errorf("team B's refusal %q: want the holder's certificate and the expiry", msg)
		}
		noLeaseID("acquire refusal", status.Convert(err).Message())
	}

	// Nor renew, release or drive it with team A's lease id.
	id := leaseID
	at := timestamppb.New(time.Now())
	calls := map[string]func() error{
		"RenewLease": func() error { _, err := teamB.RenewLease(ctx, &lineratev1.RenewLeaseRequest{LeaseId: id}); return err },
		"ReleaseLease": func() error {
			_, err := teamB.ReleaseLease(ctx, &lineratev1.ReleaseLeaseRequest{LeaseId: id})
			return err
		},
		"Tune": func() error {
			_, err := teamB.Tune(ctx, &lineratev1.TuneRequest{LeaseId: id, Irqbalance: "ignore", ExcludeCpus: []int32{0}})
			return err
		},
		"Restore":   func() error { _, err := teamB.Restore(ctx, &lineratev1.RestoreRequest{LeaseId: id}); return err },
		"Arm":       func() error { _, err := teamB.Arm(ctx, &lineratev1.ArmRequest{LeaseId: id}); return err },
		"Collect":   func() error { _, err := teamB.Collect(ctx, &lineratev1.CollectRequest{LeaseId: id}); return err },
		"Configure": func() error { _, err := teamB.Configure(ctx, &lineratev1.ConfigureRequest{LeaseId: id}); return err },
		"Start":     func() error { _, err := teamB.Start(ctx, &lineratev1.StartRequest{LeaseId: id, At: at}); return err },
		"Stop":      func() error { _, err := teamB.Stop(ctx, &lineratev1.StopRequest{LeaseId: id}); return err },
		"Result":    func() error { _, err := teamB.Result(ctx, &lineratev1.ResultRequest{LeaseId: id}); return err },
	}
	for name, call := range calls {
		err := call()
		wantCode(t, err, codes.PermissionDenied, "team B's "+name+" with team A's lease id")
		msg := status.Convert(err).Message()
		if !strings.Contains(msg, `agent is leased to certificate "coord"`) || !strings.Contains(msg, `caller (certificate "coord2")`) {
			t.Errorf("team B's %s refusal %q: want the holder and the caller named", name, msg)
		}
		noLeaseID(name+" refusal", msg)
	}
	// A guessed lease id gets the same answer: no oracle for lease ids.
	_, err = teamB.Stop(ctx, &lineratev1.StopRequest{LeaseId: "guess"})
	wantCode(t, err, codes.PermissionDenied, "team B's Stop with a guessed lease id")

	// Team A's lease and tuning are untouched.
	if got := affinities(t, root); strings.Join(got, "") != strings.Join(tuned, "") {
		t.Errorf("team A's tuning after team B's calls: %q, want %q", got, tuned)
	}
	if _, err := teamA.RenewLease(ctx, &lineratev1.RenewLeaseRequest{LeaseId: id}); err != nil {
		t.Errorf("team A renews after team B's attempts: %v", err)
	}

	// Every state-changing call is audited with the caller's certificate
	// name, its address and the lease outcome; Describe and Watch are not.
	audits := logs.audits(t)
	refused := map[string]bool{}
	var acceptedTune bool
	for _, m := range audits {
		if m["peer"] == "" || m["peer"] == nil {
			t.Errorf("audit line without a peer: %v", m)
		}
		switch m["caller"] {
		case `certificate "coord2"`:
			if lease, _ := m["lease"].(string); strings.HasPrefix(lease, "refused: agent is leased to certificate \"coord\"") {
				refused[m["method"].(string)] = true
			}
		case `certificate "coord"`:
			if m["method"] == "Tune" && m["lease"] == "accepted" && m["code"] == "OK" {
				acceptedTune = true
			}
		}
		if m["method"] == "Describe" || m["method"] == "Watch" {
			t.Errorf("a read-only call audited: %v", m)
		}
	}
	for name := range calls {
		if !refused[name] {
			t.Errorf("no audit line of team B's refused %s", name)
		}
	}
	if !refused["AcquireLease"] || !acceptedTune {
		t.Errorf("audit lines: team B's refused acquire %v, team A's accepted tune %v:\n%v", refused["AcquireLease"], acceptedTune, audits)
	}

	// Team A releases; then team B gets the agent (generation 2).
	if _, err := teamA.ReleaseLease(ctx, &lineratev1.ReleaseLeaseRequest{LeaseId: id}); err != nil {
		t.Fatal(err)
	}
	if _, err := teamB.AcquireLease(ctx, &lineratev1.AcquireLeaseRequest{CoordinatorId: "teamB/run1"}); err != nil {
		t.Fatalf("team B after team A's release: %v", err)
	}
	if d, err := teamA.Describe(ctx, &lineratev1.DescribeRequest{}); err != nil || d.Lease.GetHolder() != "coord2" || d.Lease.GetGeneration() != 2 {
		t.Errorf("describe after the hand-over: %v %v", d.GetLease(), err)
	}
}

// TestLeaseForceRelease checks the operator's way out: the agent's local
// admin socket (owner-only) ends another team's lease, stopping and
// restoring as an expiry does, and the agent is free again.
func TestLeaseForceRelease(t *testing.T) {
	_, teamA, teamB, root, state, logs := twoTeams(t, 0)
	ctx := ctxT(t, 20*time.Second)
	if res, err := ForceRelease(ctx, state, ""); err != nil || res.Released {
		t.Fatalf("force-release of a free agent: %+v %v", res, err)
	}
	leaseID := leaseAndTune(t, ctx, teamA, "teamA/run1", 0)
	if got := affinity(t, root, 42); got != "1\n" {
		t.Fatalf("irq 42 after tune: %q", got)
	}
	sock := AdminSocket(state, "agent1")
	for path, want := range map[string]os.FileMode{sock: 0o600, filepath.Dir(sock): 0o700} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v (%v), want %v", path, fi.Mode().Perm(), err, want)
		}
	}

	res, err := ForceRelease(ctx, state, "agent1")
	if err != nil {
		t.Fatal(err)
	}
	if !res.Released || res.Holder != "coord" || res.CoordinatorID != "teamA/run1" || res.Generation != 1 || res.Restored != 4 || res.Error != "" {
		t.Errorf("force-release: %+v", res)
	}
	if got := affinity(t, root, 42); got != "0-7\n" {
		t.Errorf("irq 42 after force-release: %q, want 0-7", got)
	}
	if j, _ := topology.LoadJournal(state, "eth0"); j != nil {
		t.Error("journal left after force-release")
	}
	_, err = teamA.Tune(ctx, &lineratev1.TuneRequest{LeaseId: leaseID, Irqbalance: "ignore"})
	wantCode(t, err, codes.FailedPrecondition, "team A's tune after the force-release")
	if _, err := teamB.AcquireLease(ctx, &lineratev1.AcquireLeaseRequest{CoordinatorId: "teamB/run1"}); err != nil {
		t.Errorf("team B after the force-release: %v", err)
	}
	found := false
	for _, m := range logs.audits(t) {
		if m["method"] == "admin release" && m["lease"] == "force-released" && m["holder"] == `certificate "coord"` {
			found = true
		}
	}
	if !found {
		t.Error("no audit line of the force-release")
	}
	_, err = ForceRelease(ctx, state, "nope")
	if err == nil || !strings.Contains(err.Error(), filepath.Join(state, "admin", "nope.sock")) {
		t.Errorf("force-release of an agent that does not run: %v, want the socket named", err)
	}
}

// TestLeaseLateCleanupSparesNextHolder checks the lease generation: team
// A's lease expires and its cleanup is held up (a step that ignores its
// context) past its bound; team B acquires meanwhile and tunes the host
// its own way; when A's cleanup finally runs it must not restore B's
// pins nor touch B's lease.
func TestLeaseLateCleanupSparesNextHolder(t *testing.T) {
	a, teamA, teamB, root, state, _ := twoTeams(t, 10*time.Millisecond)
	ctx := ctxT(t, 20*time.Second)
	lv := a.svc.leases
	lv.cleanupTimeout = 200 * time.Millisecond
	orig := lv.expired
	unblock, finished := make(chan struct{}), make(chan struct{})
	var started sync.Once
	blocked := make(chan struct{})
	lv.expired = func(_ context.Context, c *lease) {
		started.Do(func() { close(blocked) })
		<-unblock
		orig(context.Background(), c) // a step that outlives its context
		close(finished)
	}

	leaseAndTune(t, ctx, teamA, "teamA/run1", 300*time.Millisecond)
	pinsA := affinities(t, root)
	select {
	case <-blocked:
	case <-time.After(5 * time.Second):
		t.Fatal("team A's lease did not expire")
	}

	lb, err := teamB.AcquireLease(ctx, &lineratev1.AcquireLeaseRequest{CoordinatorId: "teamB/run1", Ttl: durationpb.New(time.Minute)})
	if err != nil {
		t.Fatalf("team B once A's cleanup overran its bound: %v", err)
	}
	if _, err := teamB.Tune(ctx, &lineratev1.TuneRequest{LeaseId: lb.LeaseId, Irqbalance: "ignore", ExcludeCpus: []int32{0, 1}}); err != nil {
		t.Fatal(err)
	}
	pinsB := affinities(t, root)
	if strings.Join(pinsA, "") == strings.Join(pinsB, "") {
		t.Fatalf("team B's pins %q are team A's: the test shows nothing", pinsB)
	}

	close(unblock)
	select {
	case <-finished:
	case <-time.After(5 * time.Second):
		t.Fatal("team A's cleanup did not finish")
	}
	if got := affinities(t, root); strings.Join(got, "") != strings.Join(pinsB, "") {
		t.Errorf("after team A's late cleanup: %q, want team B's pins %q", got, pinsB)
	}
	if j, _ := topology.LoadJournal(state, "eth0"); j == nil {
		t.Error("team A's late cleanup removed the journal of team B's tuning")
	}
	if _, err := teamB.RenewLease(ctx, &lineratev1.RenewLeaseRequest{LeaseId: lb.LeaseId}); err != nil {
		t.Errorf("team B's lease after A's late cleanup: %v", err)
	}
	// B's own release goes back to before linerate.
	if _, err := teamB.ReleaseLease(ctx, &lineratev1.ReleaseLeaseRequest{LeaseId: lb.LeaseId}); err != nil {
		t.Fatal(err)
	}
	for i, got := range affinities(t, root) {
		if got != "0-7\n" {
			t.Errorf("irq %d after team B's release: %q, want 0-7", 41+i, got)
		}
	}
}
