package agent

import (
	"context"
	"net/netip"
	"slices"
	"testing"

	"github.com/linerate/linerate/pktgen"
)

// configHost is a sender on a fake host whose data0 holds a link-local
// IPv6 address before its global one, and v6ll only a link-local one.
func configHost(t *testing.T) *configurer {
	t.Helper()
	s := unitService(t, RoleSender, fakeNetOS{addrs: map[string][]netip.Addr{
		"data0": addrs("fe80::1", "2001:db8::5", "198.18.0.1"),
		"v6ll":  addrs("fe80::2", "198.18.1.1"),
	}})
	s.conf.backend = countingBackend{}
	return s.conf
}

// The default source is the interface's first address of the
// destination's family that is not link-local.
func TestConfigureDefaultSource(t *testing.T) {
	c := configHost(t)
	for _, tc := range []struct{ dev, dst, want string }{
		{"data0", "2001:db8::2", "2001:db8::5"},
		{"data0", "198.18.0.2", "198.18.0.1"},
		{"v6ll", "198.18.1.2", "198.18.1.1"},
	} {
		cfg := sendConfig()
		cfg.Device, cfg.DstMin, cfg.PktSize = tc.dev, netip.MustParseAddr(tc.dst), 80 // room for IPv6
		// An agent on that interface.
		c.iface = tc.dev
		got, err := c.prepare(context.Background(), cfg, "")
		if err != nil {
			t.Errorf("%s to %s: %v", tc.dev, tc.dst, err)
			continue
		}
		if got.cfg.SrcMin != netip.MustParseAddr(tc.want) {
			t.Errorf("%s to %s: source %s, want %s", tc.dev, tc.dst, got.cfg.SrcMin, tc.want)
		}
	}
	cfg := sendConfig()
	cfg.Device, cfg.DstMin = "v6ll", netip.MustParseAddr("2001:db8::2")
	c.iface = "v6ll"
	_, err := c.prepare(context.Background(), cfg, "")
	wantKind(t, err, ErrInvalid, "config.src_min: missing, and v6ll has no address of the destination's family", "only a link-local IPv6 source")
	// Per-thread sources count up from the default IPv6 source; a
	// link-local destination or source is refused by name.
	cfg = sendConfig()
	cfg.Device, cfg.DstMin, cfg.PktSize, cfg.CPUs, cfg.SrcPerThread, c.iface = "data0", netip.MustParseAddr("2001:db8::2"), 80, []int{0, 1}, true, "data0"
	if got, err := c.prepare(context.Background(), cfg, ""); err != nil || got.cfg.ThreadSource(0).String() != "2001:db8::5" || got.cfg.ThreadSource(1).String() != "2001:db8::6" {
		t.Errorf("IPv6 per-thread sources: %v", err)
	}
	cfg.DstMin = netip.MustParseAddr("fe80::9")
	_, err = c.prepare(context.Background(), cfg, "")
	wantKind(t, err, ErrInvalid, "dst: fe80::9 is IPv6 link-local (fe80::/10)", "a link-local destination")
	cfg.DstMin, cfg.SrcMin = netip.MustParseAddr("2001:db8::2"), netip.MustParseAddr("fe80::1")
	_, err = c.prepare(context.Background(), cfg, "")
	wantKind(t, err, ErrInvalid, "src: fe80::1 is IPv6 link-local (fe80::/10)", "a link-local source")
	cfg = sendConfig()
	cfg.Device, c.iface = "nope", "nope"
	_, err = c.prepare(context.Background(), cfg, "")
	wantKind(t, err, ErrHost, "config.device nope: no such interface", "no such interface")
}

func TestConfigurePrepare(t *testing.T) {
	c := configHost(t)
	cfg := sendConfig()
	cfg.Device, cfg.CPUs = "", nil
	got, err := c.prepare(context.Background(), cfg, "")
	if err != nil {
		t.Fatal(err)
	}
	if got.cfg.Device != "data0" || !slices.Equal(got.cfg.CPUs, []int{0}) || len(got.warnings) != 1 || got.backend.Name() != "counting" {
		t.Errorf("defaults untuned: %+v", got)
	}
	c.tuner.cpus, c.tuner.queues = []int{2, 3}, []int{0, 1}
	if got, err := c.prepare(context.Background(), cfg, ""); err != nil || !slices.Equal(got.cfg.CPUs, []int{2, 3}) || !slices.Equal(got.cfg.Queues, []int{0, 1}) || len(got.warnings) != 0 {
		t.Errorf("defaults tuned: %+v %v, want the tuned CPUs and queues", got, err)
	}

	bad := sendConfig()
	bad.DstMin = netip.Addr{}
	_, err = c.prepare(context.Background(), bad, "")
	wantKind(t, err, ErrInvalid, "config.dst_min: missing", "no destination")
	bad = sendConfig()
	bad.DstMAC = nil
	_, err = c.prepare(context.Background(), bad, "")
	wantKind(t, err, ErrInvalid, "config.dst_mac: missing", "no destination MAC")
	bad = sendConfig()
	bad.PktSize = 1
	_, err = c.prepare(context.Background(), bad, "")
	wantKind(t, err, ErrInvalid, "", "a frame too small")

	bad = sendConfig()
	bad.PktSize = 1600
	_, err = c.prepare(context.Background(), bad, "")
	wantKind(t, err, ErrInvalid, "config.pkt_size 1600: want 60-1514 (frame without FCS; 58 bytes of headers and the pktgen header, MTU 1500)", "a frame over the interface's MTU")

	// An imix's sizes count their FCS (pktgen.IMIXEntry): a 1518-byte
	// frame is the largest of MTU 1500, for the kernel backend that sends
	// an imix.
	c.backend = kernelNamed{}
	mix := sendConfig()
	mix.PktSize, mix.IMIX = 0, pktgen.IMIX{{Size: 64, Weight: 7}, {Size: 570, Weight: 4}, {Size: 1518, Weight: 1}}
	if _, err := c.prepare(context.Background(), mix, ""); err != nil {
		t.Errorf("an imix up to 1518 bytes with FCS at MTU 1500: %v", err)
	}
	mix.IMIX = pktgen.IMIX{{Size: 64, Weight: 7}, {Size: 1519, Weight: 1}}
	_, err = c.prepare(context.Background(), mix, "")
	wantKind(t, err, ErrInvalid, "config.imix[1] 1519: want 64-1518 (Ethernet frame with FCS; 62 bytes of headers and the pktgen header, MTU 1500)", "an imix frame over the interface's MTU")

	// An agent with a generator of its own sends with it whatever the
	// name; without one, a name it does not know is refused with the
	// valid ones.
	c.backend = countingBackend{}
	if got, err := c.prepare(context.Background(), sendConfig(), "null"); err != nil || got.backend.Name() != "counting" {
		t.Errorf("its own generator, named null: %+v %v", got, err)
	}
	c.backend = nil
	_, err = c.prepare(context.Background(), sendConfig(), "warp")
	wantKind(t, err, ErrInvalid, `config.backend: unknown backend "warp": valid backends are auto, kernel, xdp, afxdp, afpacket and userspace`, "an unknown backend")
}

func TestConfigureDestinations(t *testing.T) {
	c := configHost(t)
	cfg := sendConfig()
	wantKind(t, c.checkDestinations(context.Background(), &cfg), ErrRefused, "configure: destination 198.18.0.2 is not a data address", "no receivers, no gossip")
	c.allowDst = []netip.Prefix{netip.MustParsePrefix("198.18.0.0/24")}
	if err := c.checkDestinations(context.Background(), &cfg); err != nil {
		t.Errorf("allowed by CIDR: %v", err)
	}
}

// On a tuned host with more queues than CPUs, a paced kernel-backend send
// gets one pktgen device per queue, on the thread of the CPU its IRQ was
// pinned to; an unpaced one, and the other backends, one thread per CPU
// on its first queue (a kpktgend thread serves one unpaced device only:
// pktgen.KernelPerQueue).
func TestConfigureTunedQueues(t *testing.T) {
	c := configHost(t)
	tu, _ := fixtureTuner(t)
	c.tuner = tu
	// The fixture's eth0 has 4 queues and CPUs 0-7: leave two CPUs, so
	// the plan goes round-robin (queues 0-3 on CPUs 0, 1, 0, 1), as a
	// 4-queue NIC does on a guest's two node-1 CPUs.
	if _, err := tu.tune(context.Background(), tuneOptions{irqbalance: "ignore", exclude: []int{2, 3, 4, 5, 6, 7}}); err != nil {
		t.Fatal(err)
	}
	if cpus, queues := tu.tuned(); !slices.Equal(cpus, []int{0, 1, 0, 1}) || !slices.Equal(queues, []int{0, 1, 2, 3}) {
		t.Fatalf("tuned CPUs %v queues %v, want queues 0-3 on CPUs 0, 1, 0, 1", cpus, queues)
	}
	cfg := sendConfig()
	cfg.CPUs, cfg.Count, cfg.Counts, cfg.RatePPS = nil, 0, pktgen.SplitCount(1001, 4), 1000

	c.backend = pktgen.NewKernel(testLog(t))
	got, err := c.prepare(context.Background(), cfg, "")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.cfg.CPUs, []int{0, 1, 0, 1}) || !slices.Equal(got.cfg.Queues, []int{0, 1, 2, 3}) || len(got.warnings) != 0 {
		t.Errorf("kernel backend: cpus %v queues %v warnings %q, want a device per queue on its IRQ's CPU", got.cfg.CPUs, got.cfg.Queues, got.warnings)
	}
	var entries []string
	for i := range got.cfg.CPUs {
		entries = append(entries, got.cfg.EntryName(i))
	}
	if want := []string{"data0@0q0", "data0@1q1", "data0@0q2", "data0@1q3"}; !slices.Equal(entries, want) {
		t.Errorf("kernel backend entries %v, want %v", entries, want)
	}

	unpaced := cfg
	unpaced.RatePPS, unpaced.Counts = 0, pktgen.SplitCount(1001, 2)
	if got, err = c.prepare(context.Background(), unpaced, ""); err != nil || !slices.Equal(got.cfg.CPUs, []int{0, 1}) || !slices.Equal(got.cfg.Queues, []int{0, 1}) {
		t.Errorf("kernel backend unpaced: %+v %v, want one device per thread, on its CPU's first queue", got, err)
	}

	c.backend = countingBackend{}
	cfg.Counts = pktgen.SplitCount(1001, 2)
	got, err = c.prepare(context.Background(), cfg, "")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.cfg.CPUs, []int{0, 1}) || !slices.Equal(got.cfg.Queues, []int{0, 1}) {
		t.Errorf("userspace backend: cpus %v queues %v, want one thread per CPU on its first queue", got.cfg.CPUs, got.cfg.Queues)
	}
	// Queues the caller gave are kept, on the distinct tuned CPUs.
	cfg.Queues = []int{3, 2}
	if got, err = c.prepare(context.Background(), cfg, ""); err != nil || !slices.Equal(got.cfg.CPUs, []int{0, 1}) || !slices.Equal(got.cfg.Queues, []int{3, 2}) {
		t.Errorf("given queues: %+v %v", got, err)
	}
}

// kernelNamed is the counting backend under the kernel backend's name:
// what Configure checks for kernel pktgen (an imix, several devices a
// thread) without the module.
type kernelNamed struct{ countingBackend }

func (kernelNamed) Name() pktgen.BackendName { return pktgen.BackendKernel }
