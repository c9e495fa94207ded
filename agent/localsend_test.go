package agent

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/linerate/linerate/internal/fsfixture"
	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/topology"
)

// flagNames name the inputs as a command's flags do.
var flagNames = SendNames{
	Device: "--iface", Src: "--src", DstMAC: "--dst-mac", Backend: "--backend", FrameSize: "--frame-size", FrameWithFCS: true,
	Count: "--count", Rate: "--rate", Threads: "--threads", CPUs: "--cpus",
}

// localSend is a send of 1003 packets at 4000 pps from eth0 of the
// fixture host (4 queues on node 0, CPUs 0-3), whose interface holds
// 198.18.1.1 at MTU 1500, with the neighbour table arp.
func localSend(t *testing.T, fixture, arp string) LocalSend {
	t.Helper()
	files := map[string]string{}
	if arp != "" {
		files[topology.ARPFile] = arp
	}
	return LocalSend{
		Root:   hostRoot(t, fixture, files),
		Config: pktgen.Config{Device: "eth0", PktSize: 60, DstMin: netip.MustParseAddr("198.18.0.2"), SrcPerThread: true},
		Count:  1003, Rate: 4000, Names: flagNames, Log: testLog(t),
		netOS: fakeNetOS{addrs: map[string][]netip.Addr{"eth0": addrs("fe80::1", "198.18.1.1")}},
	}
}

// hostRoot is the fixture host's files with files (path: content) added.
func hostRoot(t *testing.T, fixture string, files map[string]string) topology.Root {
	t.Helper()
	dir := t.TempDir()
	if err := fsfixture.UnpackFile(filepath.Join("..", "topology", "testdata", fixture+".tree"), dir); err != nil {
		t.Fatal(err)
	}
	for p, b := range files {
		p = filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root, err := topology.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return root
}

const arpTable = "IP address       HW type     Flags       HW address            Mask     Device\n" +
	"198.18.0.2       0x1         0x2         02:00:00:00:00:02     *        eth0\n"

// A local send takes what it is not given from the host: the threads on
// the queues topology plans (one per CPU), totals split over them, the
// interface's source address and the destination's MAC from the
// neighbour table.
func TestLocalSendCompose(t *testing.T) {
	l := localSend(t, "apply-basic", arpTable)
	cfg, err := l.Compose()
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(cfg.CPUs, cfg.Queues, cfg.Counts, cfg.Rates) != "[0 1 2 3] [0 1 2 3] [251 251 251 250] [1000 1000 1000 1000]" {
		t.Errorf("cpus %v queues %v counts %v rates %v", cfg.CPUs, cfg.Queues, cfg.Counts, cfg.Rates)
	}
	if cfg.SrcMin != netip.MustParseAddr("198.18.1.1") || cfg.DstMAC.String() != "02:00:00:00:00:02" {
		t.Errorf("src %s dst_mac %s, want the interface's address and the neighbour's MAC", cfg.SrcMin, cfg.DstMAC)
	}
	// Two planned queues; CPUs given: the given ones.
	l.Threads = 2
	if cfg, err = l.Compose(); err != nil || fmt.Sprint(cfg.CPUs, cfg.Queues) != "[0 1] [0 1]" {
		t.Errorf("2 threads: %v %v", cfg, err)
	}
	l.Threads, l.Config.CPUs = 0, []int{2, 3}
	if cfg, err = l.Compose(); err != nil || fmt.Sprint(cfg.CPUs) != "[2 3]" || cfg.Queues != nil {
		t.Errorf("given CPUs: %v %v", cfg, err)
	}
}

// A virtual device has no NIC topology: its threads run on the first
// online CPUs.
func TestLocalSendVirtual(t *testing.T) {
	l := localSend(t, "virtual", arpTable)
	l.Config.Device, l.Threads = "veth4c1e2f3", 2
	l.netOS = fakeNetOS{addrs: map[string][]netip.Addr{"veth4c1e2f3": addrs("198.18.1.1")}}
	cfg, err := l.Compose()
	if err != nil || fmt.Sprint(cfg.CPUs) != "[0 1]" || cfg.Queues != nil {
		t.Fatalf("veth, 2 threads: %+v %v", cfg, err)
	}
	l.Threads = 1000
	_, err = l.Compose()
	wantKind(t, err, ErrInvalid, "--threads 1000: only", "more threads than online CPUs")
}

// What the input gets wrong is ErrInvalid, named as the flags are.
func TestLocalSendRefuses(t *testing.T) {
	for _, tt := range []struct {
		name, want string
		edit       func(l *LocalSend)
	}{
		{"frame over the MTU", "--frame-size 1600: want 64-1518 (Ethernet frame with FCS; 62 bytes", func(l *LocalSend) { l.Config.PktSize = 1596 }},
		{"tagged frame over the MTU", "--frame-size 1600: want 66-1522", func(l *LocalSend) { l.Config.PktSize, l.Config.HasVLAN, l.Config.VLANID = 1596, true, 5 }},
		{"runt", "--frame-size 50: want 64-1518", func(l *LocalSend) { l.Config.PktSize = 46 }},
		{"too many threads", "--threads: ", func(l *LocalSend) { l.Threads = 9 }},
		{"count below the threads", "--count 3 is less than the 4 threads", func(l *LocalSend) { l.Count = 3 }},
		{"rate below the threads", "--rate 3 over 4 threads: below 1 pps per thread: want --rate at least 4 or fewer threads (--threads, --cpus)", func(l *LocalSend) { l.Rate = 3 }},
		{"no neighbour", "--dst-mac: 198.18.0.9 is not in the ARP table; give --dst-mac (or ping it first)", func(l *LocalSend) { l.Config.DstMin = netip.MustParseAddr("198.18.0.9") }},
		{"no source", "--src: missing, and eth0 has no address of the destination's family (2001:db8::2): give --src", func(l *LocalSend) {
			l.Config.DstMin, l.Config.PktSize = netip.MustParseAddr("2001:db8::2"), 80
		}},
		{"source is the destination", "--src: thread 1 would send from 198.18.0.2, the destination itself", func(l *LocalSend) { l.Config.SrcMin = netip.MustParseAddr("198.18.0.1") }},
		{"invalid config", "xmit_mode", func(l *LocalSend) { l.Config.XmitMode = "warp" }},
		{"no such interface", "--iface: ", func(l *LocalSend) { l.Config.Device = "nope0" }},
	} {
		l := localSend(t, "apply-basic", arpTable)
		tt.edit(&l)
		_, err := l.Compose()
		wantKind(t, err, ErrInvalid, tt.want, tt.name)
	}
	// An interface this host cannot read has no address and no known
	// MTU: a given source is enough, and any frame up to pktgen's bound.
	l := localSend(t, "apply-basic", arpTable)
	l.netOS = fakeNetOS{}
	l.Config.SrcMin, l.Config.PktSize = netip.MustParseAddr("198.18.1.1"), 8996
	if _, err := l.Compose(); err != nil {
		t.Errorf("unreadable interface, source given: %v", err)
	}
	l.Config.SrcMin = netip.Addr{}
	_, err := l.Compose()
	wantKind(t, err, ErrInvalid, "--src: missing", "unreadable interface, no source")
}

// The backend is chosen by name, and what it cannot send is refused.
func TestLocalSendBackend(t *testing.T) {
	l := LocalSend{Names: flagNames, Log: testLog(t)}
	mac, _ := net.ParseMAC("02:00:00:00:00:02")
	cfg := &pktgen.Config{Device: "lo", CPUs: []int{0}, Count: 1, PktSize: 60, DstMin: netip.MustParseAddr("127.0.0.2"), DstMAC: mac}
	_, _, err := l.Backend(cfg, "fpga", nil)
	wantKind(t, err, ErrInvalid, "--backend: ", "an unknown backend")
	cfg.Burst = 4
	_, _, err = l.Backend(cfg, "afpacket", nil)
	wantKind(t, err, ErrInvalid, "afpacket backend: burst", "a burst the userspace backends do not send")
	cfg.Burst = 1
	if be, why, err := l.Backend(cfg, "afpacket", nil); err != nil || be.Name() != "afpacket" || why == "" {
		t.Errorf("afpacket: %v %q %v", be, why, err)
	}
}

// The MTU comes from the host's files when they have it (a snapshot under
// --root, or the live /sys), else from the interface: a frame the files'
// MTU carries is sent, one above it refused.
func TestLocalSendMTUFromRoot(t *testing.T) {
	l := localSend(t, "apply-basic", arpTable)
	// The interface itself says 1500 (fakeNetOS).
	l.Root = hostRoot(t, "apply-basic", map[string]string{topology.ARPFile: arpTable, "sys/class/net/eth0/mtu": "9000\n"})
	l.Config.PktSize = 9014
	if _, err := l.Compose(); err != nil {
		t.Errorf("a 9018-byte frame at the files' MTU 9000: %v", err)
	}
	l.Config.PktSize = 9015
	_, err := l.Compose()
	wantKind(t, err, ErrInvalid, "--frame-size 9019: want 64-9018", "a frame over the files' MTU")
}
