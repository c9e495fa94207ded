package agent

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/linerate/linerate/pktgen"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// countingBackend "sends" cfg.Count packets at once at its StartAt, as
// a real backend waits for it (stopped before: nothing sent).
type countingBackend struct{}

func (countingBackend) Name() pktgen.BackendName { return "counting" }
func (countingBackend) Run(ctx context.Context, cfg pktgen.Config, _ func(pktgen.Progress)) (*pktgen.Summary, error) {
	if pktgen.WaitUntil(ctx, cfg.StartAt) != nil {
		return &pktgen.Summary{Backend: "counting", Device: cfg.Device, Interrupted: true}, nil
	}
	return &pktgen.Summary{Backend: "counting", Device: cfg.Device, Packets: cfg.Count}, nil
}

// loAddrs are the fake host's loopback addresses: a source for the
// IPv4 destinations below.
var loAddrs = map[string][]netip.Addr{"lo": addrs("127.0.0.1", "::1")}

// The frames the sender's host dropped over a send (the device's
// tx_dropped at the end less at the start) are in the Result that waited
// for the send: the second read is on record before Result answers.
func TestResultCarriesTxDropped(t *testing.T) {
	certs := testCerts(t)
	tx := &txReads{values: []uint64{5, 12}, slow: 20 * time.Millisecond}
	a := startAgent(t, Config{Name: "snd", Role: RoleSender, Iface: "lo", Bind: "", AllowMgmtIface: true,
		AllowDst: []netip.Prefix{netip.MustParsePrefix("198.18.0.0/15")}, Backend: countingBackend{},
		netOS: fakeNetOS{tx: tx, addrs: loAddrs}}, certs)
	c := dial(t, a, certs, "coord")
	ctx := ctxT(t, 10*time.Second)
	for round := range 5 {
		tx.mu.Lock()
		tx.values = []uint64{5, 12}
		tx.mu.Unlock()
		l, err := c.AcquireLease(ctx, &lineratev1.AcquireLeaseRequest{CoordinatorId: "c1"})
		if err != nil {
			t.Fatal(err)
		}
		res := sendNow(t, ctx, c, l.LeaseId, &lineratev1.SenderConfig{
			Cpus: []int32{0}, Count: 1000, PktSize: 60, DstMin: "198.18.0.2", DstMac: "02:00:00:00:00:02",
		})
		if res.Summary.Packets != 1000 || res.Summary.TxDropped != 7 {
			t.Fatalf("round %d: sent %d, tx_dropped %d; want 1000 and 12 − 5 = 7", round, res.Summary.Packets, res.Summary.TxDropped)
		}
		if _, err := c.ReleaseLease(ctx, &lineratev1.ReleaseLeaseRequest{LeaseId: l.LeaseId}); err != nil {
			t.Fatal(err)
		}
	}
}

// An agent without gossip knows no receivers: it refuses a destination
// outside --allow-dst at once and says why, instead of waiting for
// gossip that cannot come.
func TestConfigureWithoutGossipRefusesAtOnce(t *testing.T) {
	certs := testCerts(t)
	a := startAgent(t, Config{Name: "snd", Role: RoleSender, Iface: "lo", Bind: "", AllowMgmtIface: true,
		AllowDst: []netip.Prefix{netip.MustParsePrefix("198.18.0.0/15")}, Backend: countingBackend{}, netOS: fakeNetOS{addrs: loAddrs}}, certs)
	c := dial(t, a, certs, "coord")
	ctx := ctxT(t, 10*time.Second)
	l, err := c.AcquireLease(ctx, &lineratev1.AcquireLeaseRequest{CoordinatorId: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	_, err = c.Configure(ctx, &lineratev1.ConfigureRequest{LeaseId: l.LeaseId, Config: &lineratev1.SenderConfig{
		Cpus: []int32{0}, Count: 1000, PktSize: 60, DstMin: "10.9.9.9", DstMac: "02:00:00:00:00:02",
	}})
	wantCode(t, err, codes.PermissionDenied, "configure to 10.9.9.9")
	if err == nil || !strings.Contains(err.Error(), "runs without gossip") {
		t.Errorf("refusal %v: want it to say the agent runs without gossip", err)
	}
	if d := time.Since(t0); d >= destinationSettle {
		t.Errorf("refused after %s: it waited for gossip it does not have", d)
	}
}
