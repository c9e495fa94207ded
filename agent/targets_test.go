package agent

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/serf/serf"
	"google.golang.org/grpc/codes"

	"github.com/linerate/linerate/internal/cluster/gossip"
	"github.com/linerate/linerate/internal/cluster/mtls"
	"github.com/linerate/linerate/pktgen"
	lineratev1 "github.com/linerate/linerate/proto/linerate/v1"
)

// forge joins the cluster at seed as a member that claims to be a
// receiver: name, its gRPC address grpcAddr, data address ip and MAC
// mac, all of its own choosing. It holds the cluster's key (a leaked
// key, or an insider): gossip lets it in; the sender must not believe it.
func forge(t *testing.T, name, grpcAddr, ip, mac, seed string) {
	t.Helper()
	hw, _ := net.ParseMAC(mac)
	tags, err := gossip.Tags{Role: gossip.RoleReceiver, GRPC: grpcAddr, Iface: "eth0", DataIPs: addrs(ip), DataMAC: hw}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	m, err := gossip.Start(gossip.Config{Name: name, Tags: tags, Bind: "127.0.0.1:0", Key: testGossipKey, Logger: testLog(t), Tune: fastSerf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Stop() })
	if _, err := m.Join([]string{seed}, true); err != nil {
		t.Fatal(err)
	}
}

// Two real agents and forged members on real serf, real mutual TLS: the
// sender sends to the receiver as its own Describe names it (asked with
// the sender's certificate, answered by one of the receiver's name), and
// refuses a forged member's claimed address — whether its gRPC address
// leads to another agent (whose certificate names someone else) or to
// nothing — and the receiver's address with a forged member's MAC.
func TestSenderRefusesForgedReceiver(t *testing.T) {
	certs := testCerts(t)
	rcvMAC, _ := net.ParseMAC("02:00:00:00:00:02")
	rcv := startAgent(t, Config{Name: "rcv", Role: RoleReceiver, Iface: "data0", Bind: "127.0.0.1:0", serfHook: fastSerf,
		netOS: fakeNetOS{addrs: map[string][]netip.Addr{"data0": addrs("198.18.0.2")}, macs: map[string]net.HardwareAddr{"data0": rcvMAC}}}, certs)
	snd := startAgent(t, Config{Name: "snd", Role: RoleSender, Iface: "lo", Bind: "127.0.0.1:0", Join: []string{rcv.GossipAddr()},
		AllowMgmtIface: true, Backend: countingBackend{}, netOS: fakeNetOS{addrs: loAddrs}, serfHook: fastSerf}, certs)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nowhere := closed.Addr().String()
	closed.Close()
	forge(t, "evil", rcv.GRPCAddr(), "198.18.0.99", "02:00:00:00:00:99", rcv.GossipAddr())
	forge(t, "ghost", nowhere, "198.18.0.98", "02:00:00:00:00:98", rcv.GossipAddr())
	forge(t, "twin", rcv.GRPCAddr(), "198.18.0.2", "02:00:00:00:00:97", rcv.GossipAddr())
	// An agent whose certificate (imp) also names mallory among its SANs:
	// the handshake passes for mallory, the common name does not.
	issueIn(t, certs, mtls.LeafOptions{Name: "imp", Role: mtls.RoleAgent, Hosts: []string{"127.0.0.1", "mallory"}})
	imp := startAgent(t, Config{Name: "imp", Role: RoleSender, Iface: "lo", Bind: "127.0.0.1:0", Join: []string{rcv.GossipAddr()},
		AllowMgmtIface: true, Backend: countingBackend{}, netOS: fakeNetOS{addrs: loAddrs}, serfHook: fastSerf}, certs)
	forge(t, "mallory", imp.GRPCAddr(), "198.18.0.96", "02:00:00:00:00:96", rcv.GossipAddr())
	// Gossip brings the forged members to the sender in well under a
	// second on a quiet machine; make unit runs every package's tests at
	// once, where it took over 5 s now and then. The wait is only for
	// gossip: what the test checks comes after.
	for _, name := range []string{"rcv", "evil", "ghost", "twin", "mallory"} {
		poll(t, 20*time.Second, "the sender sees "+name, func() bool { _, ok := member(snd, name); return ok })
	}

	c := dial(t, snd, certs, "coord")
	ctx := ctxT(t, 30*time.Second)
	l, err := c.AcquireLease(ctx, &lineratev1.AcquireLeaseRequest{CoordinatorId: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	configure := func(dst, mac string) error {
		_, err := c.Configure(ctx, &lineratev1.ConfigureRequest{LeaseId: l.LeaseId, Config: &lineratev1.SenderConfig{
			Cpus: []int32{0}, Count: 10, PktSize: 60, DstMin: dst, DstMac: mac, SrcMin: "127.0.0.1",
		}})
		return err
	}
	if err := configure("198.18.0.2", "02:00:00:00:00:02"); err != nil {
		t.Fatalf("the real receiver refused: %v", err)
	}
	for _, tc := range []struct {
		dst, mac string
		says     []string
	}{
		{"198.18.0.99", "02:00:00:00:00:99", []string{"evil (Describe at " + rcv.GRPCAddr() + " over mutual TLS", "certificate is valid for rcv, not evil"}},
		{"198.18.0.96", "02:00:00:00:00:96", []string{`mallory (the certificate at ` + imp.GRPCAddr() + ` names "imp", not the member)`}},
		{"198.18.0.98", "02:00:00:00:00:98", []string{"ghost (Describe at " + nowhere}},
		{"198.18.0.2", "02:00:00:00:00:97", []string{"dst_mac 02:00:00:00:00:97 is not the data MAC of the receiver holding 198.18.0.2 (rcv 198.18.0.2 at 02:00:00:00:00:02)"}},
	} {
		err := configure(tc.dst, tc.mac)
		wantCode(t, err, codes.PermissionDenied, "configure to "+tc.dst+" at "+tc.mac)
		for _, say := range tc.says {
			if err == nil || !strings.Contains(err.Error(), say) {
				t.Errorf("configure to %s at %s: %v; want it to say %q", tc.dst, tc.mac, err, say)
			}
		}
	}
}

// The book asks a member once per targetTTL, a refused one again after
// targetRetry, and anew when its tags change; only members claiming a
// destination are asked. Without a describer (--insecure) the tags are
// taken as they are.
func TestTargetBookCaches(t *testing.T) {
	mac, _ := net.ParseMAC("02:00:00:00:00:02")
	recv := func(name, ip, grpc string) serf.Member {
		tags, err := gossip.Tags{Role: gossip.RoleReceiver, GRPC: grpc, DataIPs: addrs(ip), DataMAC: mac}.Encode()
		if err != nil {
			t.Fatal(err)
		}
		return serf.Member{Name: name, Tags: tags, Status: serf.StatusAlive}
	}
	ms := []serf.Member{recv("r1", "198.18.0.2", "a:1"), recv("r2", "198.18.0.3", "a:2")}
	var asked atomic.Int32
	fail := atomic.Bool{}
	describe := func(_ context.Context, name, addr string) (*lineratev1.DescribeResponse, error) {
		asked.Add(1)
		if fail.Load() {
			return nil, errors.New("no answer")
		}
		return &lineratev1.DescribeResponse{Role: lineratev1.Role_ROLE_RECEIVER, Nic: &lineratev1.Nic{Mac: "02:00:00:00:00:02", DataIps: []string{"198.18.0.7"}}}, nil
	}
	now := time.Unix(1000, 0)
	b := newTargetBook(func() []serf.Member { return ms }, describe, testLog(t))
	b.now = func() time.Time { return now }
	cfg := &pktgen.Config{DstMin: netip.MustParseAddr("198.18.0.2")}
	ts, refused := b.targets(context.Background(), cfg)
	if len(ts) != 1 || ts[0].name != "r1" || ts[0].ips[0] != netip.MustParseAddr("198.18.0.7") || refused != "" || asked.Load() != 1 {
		t.Fatalf("targets %v (%q), asked %d: want r1 as it describes itself (198.18.0.7), asked once, r2 not", ts, refused, asked.Load())
	}
	now = now.Add(targetTTL - time.Second)
	b.targets(context.Background(), cfg)
	if asked.Load() != 1 {
		t.Errorf("asked again within the TTL")
	}
	now = now.Add(2 * time.Second)
	fail.Store(true)
	if ts, refused := b.targets(context.Background(), cfg); len(ts) != 0 || !strings.Contains(refused, "r1 (no answer)") || asked.Load() != 2 {
		t.Errorf("after the TTL: %v %q, asked %d; want r1 asked again and refused", ts, refused, asked.Load())
	}
	fail.Store(false)
	b.targets(context.Background(), cfg)
	if asked.Load() != 2 {
		t.Error("a refused member asked again within targetRetry")
	}
	now = now.Add(targetRetry)
	if ts, _ := b.targets(context.Background(), cfg); len(ts) != 1 || asked.Load() != 3 {
		t.Errorf("after targetRetry: %v, asked %d", ts, asked.Load())
	}
	ms[0] = recv("r1", "198.18.0.2", "a:9")
	b.targets(context.Background(), cfg)
	if asked.Load() != 4 {
		t.Error("new tags did not ask anew")
	}

	tagsOnly := newTargetBook(func() []serf.Member { return ms }, nil, testLog(t))
	if ts, refused := tagsOnly.targets(context.Background(), cfg); len(ts) != 1 || ts[0].ips[0] != netip.MustParseAddr("198.18.0.2") || refused != "" {
		t.Errorf("insecure: %v %q; want r1 as its tags say", ts, refused)
	}
}

// On the CA's own machine (--allow-ca-key: ca.key beside the agent's
// certificates) a sender asks receivers with its certificate as it
// serves with it; without the flag it refuses to, naming the CA key.
func TestDescriberAllowsCAKey(t *testing.T) {
	certs := testCerts(t)
	rcv := startAgent(t, Config{Name: "rcv", Role: RoleSender, Iface: "lo", AllowMgmtIface: true, Backend: countingBackend{},
		netOS: fakeNetOS{addrs: loAddrs}}, certs)
	certFor(t, certs, "snd")
	withKey := t.TempDir()
	files, err := filepath.Glob(filepath.Join(certs, "*"))
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := caDirs.Load(certs)
	for _, f := range append(files, filepath.Join(ca.(string), mtls.CAKeyFile)) {
		copyFile(t, f, filepath.Join(withKey, filepath.Base(f)))
	}
	ctx := ctxT(t, 10*time.Second)
	if _, err := mtlsDescriber(withKey, "snd", false)(ctx, "rcv", rcv.GRPCAddr()); err == nil || !strings.Contains(err.Error(), "credentials to ask it") ||
		!strings.Contains(err.Error(), mtls.CAKeyFile) {
		t.Errorf("without --allow-ca-key: %v, want the CA key refused", err)
	}
	d, err := mtlsDescriber(withKey, "snd", true)(ctx, "rcv", rcv.GRPCAddr())
	if err != nil || d.GetNic().GetIface() != "lo" {
		t.Errorf("with --allow-ca-key: %v %v", d, err)
	}
}
