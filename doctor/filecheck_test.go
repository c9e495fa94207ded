package doctor

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/linerate/linerate/internal/fsfixture"
	"github.com/linerate/linerate/topology"
)

// fixtureRoot unpacks a base fixture tree and then the edit trees named
// after it on top (testdata/README.md says what each is) into a temporary
// directory and opens it as a host root.
func fixtureRoot(t *testing.T, trees ...string) (*topology.DirRoot, string) {
	t.Helper()
	dir := t.TempDir()
	for _, tr := range trees {
		data, err := os.ReadFile(filepath.FromSlash(tr))
		if err != nil {
			t.Fatal(err)
		}
		a, err := fsfixture.Parse(data)
		if err != nil {
			t.Fatalf("fixture %s: %v", tr, err)
		}
		// An edit replaces the base's files (a read-only one too).
		for _, e := range a.Entries {
			_ = os.Remove(filepath.Join(dir, filepath.FromSlash(e.Path)))
		}
		if err := a.Unpack(dir); err != nil {
			t.Fatalf("fixture %s: %v", tr, err)
		}
	}
	return openRoot(t, dir), dir
}

// openRoot opens dir as a host root until the test ends.
func openRoot(t *testing.T, dir string) *topology.DirRoot {
	t.Helper()
	r, err := topology.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// Fixture trees.
const (
	host     = "testdata/host.tree"
	vmDebian = "testdata/vm-debian.tree"
	virtual  = "../topology/testdata/virtual.tree" // veth4c1e2f3 of a Docker host
	mlx5     = "../topology/testdata/mlx5-new.tree"
)

func edit(name string) string { return "testdata/edits/" + name + ".tree" }

// fileCase is one check on one fixture: what it must say.
type fileCase struct {
	name  string
	trees []string
	opts  Options
	host  func(*Host) // changes to the fixture's host: a clock, xdp-features
	want  Status
	// evidence and fix are substrings the check's evidence (any item) and
	// fix must hold ("-": a WARN or FAIL with no fix to give, such as
	// evidence that cannot be read); fixClass is its class.
	evidence []string
	fix      string
	fixClass FixClass
}

// runFileCases runs check id on each case, with the interface eth0 when
// a case names none.
func runFileCases(t *testing.T, id string, cases []fileCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, dir := fixtureRoot(t, tc.trees...)
			h := Host{Root: r, RootName: dir}
			if tc.host != nil {
				tc.host(&h)
			}
			o := tc.opts
			if o.Iface == "" {
				o.Iface = "eth0"
			}
			rep, err := Run(context.Background(), h, o)
			if err != nil {
				t.Fatal(err)
			}
			c := rep.Find(id)
			if c == nil {
				t.Fatalf("no check %s", id)
			}
			all := strings.Join(c.Evidence, "\n")
			if c.Status != tc.want {
				t.Errorf("status %s, want %s; evidence:\n%s\nfix: %s", c.Status, tc.want, all, c.Fix)
			}
			if len(c.Evidence) == 0 {
				t.Errorf("no evidence")
			}
			for _, s := range tc.evidence {
				if !strings.Contains(all, s) {
					t.Errorf("evidence lacks %q:\n%s", s, all)
				}
			}
			if tc.fix != "-" && !strings.Contains(c.Fix, tc.fix) {
				t.Errorf("fix %q lacks %q", c.Fix, tc.fix)
			}
			if c.Status == Pass && c.Fix != "" {
				t.Errorf("a PASS with a fix: %q", c.Fix)
			}
			if c.Status != Pass && c.Fix == "" && tc.fix != "-" {
				t.Errorf("a %s without a fix", c.Status)
			}
			if c.FixClass != tc.fixClass {
				t.Errorf("fix class %q, want %q", c.FixClass, tc.fixClass)
			}
			if c.Why == "" || c.Title == "" {
				t.Errorf("title %q, why %q: both must be said", c.Title, c.Why)
			}
		})
	}
}

func TestCheckIRQBalance(t *testing.T) {
	runFileCases(t, "irqbalance", []fileCase{
		{name: "not running", trees: []string{host}, want: Pass, evidence: []string{"no process named irqbalance"}},
		{name: "running, nothing banned", trees: []string{host, edit("irqbalance")}, want: Fail,
			evidence: []string{"pid 812", "/usr/sbin/irqbalance --foreground", "queue IRQs 38, 39 of eth0 are not banned"},
			fix:      "IRQBALANCE_ARGS=\"--banirq=38 --banirq=39\"\n  IRQBALANCE_BANNED_CPULIST=0"},
		{name: "running, nothing banned, policy ignore", trees: []string{host, edit("irqbalance")}, opts: Options{IRQBalance: topology.IRQBalanceIgnore},
			want: Warn, fix: "systemctl stop irqbalance"},
		{name: "every queue IRQ banned", trees: []string{host, edit("irqbalance-banned")}, want: Pass,
			evidence: []string{"banned CPUs 0", "every queue IRQ of eth0 is banned (2)"}},
		{name: "one of two banned", trees: []string{host, edit("irqbalance-partial")}, want: Fail, evidence: []string{"queue IRQs 39 of eth0"}, fix: "--banirq=39"},
		{name: "banned by module name", trees: []string{host, edit("irqbalance-banmod")}, want: Pass},
		{name: "policy script", trees: []string{host, edit("irqbalance-policy")}, want: Warn,
			evidence: []string{"policy script /etc/irqbalance.d/linerate.sh"}, fix: "policy script print ban=true"},
		{name: "virtual interface", trees: []string{virtual, edit("irqbalance")}, opts: Options{Iface: "veth4c1e2f3"}, want: Fail,
			evidence: []string{"veth4c1e2f3 has no queue IRQs to ban"}, fix: "systemctl stop irqbalance"},
		{name: "virtual interface, not running", trees: []string{virtual}, opts: Options{Iface: "veth4c1e2f3"}, want: Pass},
	})
}

func TestCheckSteering(t *testing.T) {
	runFileCases(t, "steering", []fileCase{
		{name: "all off", trees: []string{host}, want: Pass,
			evidence: []string{"/sys/class/net/eth0/queues/rx-0/rps_cpus: 0", "rps_sock_flow_entries: 0", "/sys/class/net/eth0/queues/tx-0/xps_cpus: absent"}},
		{name: "RPS to other CPUs", trees: []string{host, edit("rps")}, want: Warn, fixClass: FixRPS,
			evidence: []string{"rx-0: RPS steers to CPUs 0-1, the queue is planned on 0"}, fix: "echo 0 > /sys/class/net/eth0/queues/rx-0/rps_cpus"},
		{name: "RPS on, sender only", trees: []string{host, edit("rps")}, opts: Options{Role: RoleSender}, want: Pass,
			evidence: []string{"RPS and RFS: not checked, the host only sends"}},
		{name: "RPS to the queue's own CPU", trees: []string{host, edit("rps-own")}, want: Pass},
		{name: "RFS on", trees: []string{host, edit("rfs")}, want: Warn,
			evidence: []string{"rx-0: RFS on (4096 flows, 32768 socket flow entries)"}, fix: "echo 0 > /proc/sys/net/core/rps_sock_flow_entries"},
		{name: "virtio's own XPS", trees: []string{vmDebian}, want: Pass, evidence: []string{"/sys/class/net/eth0/queues/tx-2/xps_cpus: 4"}},
		{name: "XPS across planned CPUs", trees: []string{vmDebian, edit("vm-xps")}, want: Warn,
			evidence: []string{"tx-2: XPS sends from CPUs 3 on this queue, whose IRQ is planned on 2"}, fix: "echo 4 > /sys/class/net/eth0/queues/tx-2/xps_cpus"},
		{name: "XPS across planned CPUs, receiver only", trees: []string{vmDebian, edit("vm-xps")}, opts: Options{Role: RoleReceiver}, want: Pass},
	})
}

func TestCheckGovernor(t *testing.T) {
	runFileCases(t, "governor", []fileCase{
		{name: "no cpufreq", trees: []string{host}, want: Pass, evidence: []string{"no frequency scaling exposed (a VM or fixed clock)"}},
		{name: "no cpufreq in the VM", trees: []string{vmDebian}, want: Pass},
		{name: "powersave", trees: []string{host, edit("cpufreq-powersave")}, want: Warn, fixClass: FixGovernor,
			evidence: []string{"/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor: powersave", "scaling_driver: acpi-cpufreq"},
			fix:      "echo performance > /sys/devices/system/cpu/cpu$c/cpufreq/scaling_governor"},
		{name: "performance", trees: []string{host, edit("cpufreq-performance")}, want: Pass,
			evidence: []string{"cpu0/cpufreq/scaling_governor: performance"}},
	})
}

func TestCheckIdle(t *testing.T) {
	runFileCases(t, "idle", []fileCase{
		{name: "no cpuidle", trees: []string{host}, want: Pass, evidence: []string{"no idle states exposed"}},
		{name: "C2 of 400 µs enabled", trees: []string{host, edit("cpuidle")}, want: Warn,
			evidence: []string{"cpu0: enabled idle states with exit latency above 20 µs: state2 (C2, 400 µs)", "state1 C1 1 µs enabled"},
			fix:      "echo 1 > /sys/devices/system/cpu/cpu0/cpuidle/state2/disable"},
		{name: "C2 disabled", trees: []string{host, edit("cpuidle"), edit("cpuidle-off")}, want: Pass, evidence: []string{"state2 C2 400 µs disabled"}},
	})
}

func TestCheckSMT(t *testing.T) {
	runFileCases(t, "smt", []fileCase{
		{name: "one thread per core", trees: []string{host}, want: Pass, evidence: []string{"each planned CPU has its core to itself"}},
		{name: "siblings off the plan", trees: []string{mlx5}, opts: Options{Iface: "ens1f0np0", CPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}}, want: Warn,
			evidence: []string{"cpu16: online, not isolated, not planned, non-idle unknown (/proc/stat: absent)", "core_cpus_list: 0,16"},
			fix:      "echo off > /sys/devices/system/cpu/smt/control"},
		{name: "siblings busy since boot", trees: []string{host, edit("smt")}, want: Warn, evidence: []string{"cpu1: online, not isolated, not planned, non-idle 51.8% of its time since boot"}},
		{name: "the plan on both threads of each core", trees: []string{mlx5}, opts: Options{Iface: "ens1f0np0"}, want: Pass,
			evidence: []string{"siblings 0-7,16-23 are planned CPUs themselves"}},
	})
}

func TestCheckNUMA(t *testing.T) {
	runFileCases(t, "numa", []fileCase{
		{name: "one node", trees: []string{host}, want: Pass, evidence: []string{"a single node"}},
		{name: "plan on the NIC's node", trees: []string{vmDebian}, want: Pass, evidence: []string{"numa_node: 1", "the NIC's local CPUs: 2-3; the run's CPUs: 2-3"}},
		{name: "CPUs off the NIC's node", trees: []string{vmDebian}, opts: Options{CPUs: []int{0, 1}}, want: Fail,
			evidence: []string{"CPUs 0-1 are off node 1"}, fix: "--cpus 2-3"},
		{name: "one CPU off the node", trees: []string{vmDebian}, opts: Options{CPUs: []int{1, 2}}, want: Fail, evidence: []string{"CPUs 1 are off node 1"}},
		{name: "virtual", trees: []string{virtual}, opts: Options{Iface: "veth4c1e2f3"}, want: Pass, evidence: []string{"a virtual interface"}},
	})
}

func TestCheckMTU(t *testing.T) {
	runFileCases(t, "mtu", []fileCase{
		{name: "64 B in 1400", trees: []string{host}, opts: Options{FrameSize: 64}, want: Pass, evidence: []string{"/sys/class/net/eth0/mtu: 1400", "frame 64 B (--frame-size) = 46 B payload"}},
		{name: "1418 B fits 1400 exactly", trees: []string{host}, opts: Options{FrameSize: 1418}, want: Pass},
		{name: "1419 B does not", trees: []string{host}, opts: Options{FrameSize: 1419}, want: Fail, fix: "ip link set dev eth0 mtu 1401"},
		{name: "default 1518 B in 1400", trees: []string{host}, want: Fail, evidence: []string{"no --frame-size: the largest RFC 2544 frame"}, fix: "--frame-size 1418 or less"},
		{name: "1518 B in 1500", trees: []string{vmDebian}, opts: Options{FrameSize: 1518}, want: Pass},
		{name: "1519 B in 1500", trees: []string{vmDebian}, opts: Options{FrameSize: 1519}, want: Fail},
		{name: "no mtu file", trees: []string{virtual}, opts: Options{Iface: "veth4c1e2f3"}, want: Warn, evidence: []string{"/sys/class/net/veth4c1e2f3/mtu: absent"}, fix: "-"},
	})
}

func TestCheckKernel(t *testing.T) {
	features := func(f ...string) func(*Host) {
		return func(h *Host) { h.XDPFeatures = func(string) ([]string, error) { return f, nil } }
	}
	runFileCases(t, "kernel", []fileCase{
		// auto takes the next backend: what is missing is evidence, not a warning.
		{name: "sender without pktgen", trees: []string{host}, opts: Options{Role: RoleSender}, want: Pass,
			evidence: []string{"CONFIG_NET_PKTGEN: not set (/boot/config-6.18.44-fc-v1272)", "the sender falls back to a userspace engine"}},
		{name: "sender asking for kernel pktgen", trees: []string{host}, opts: Options{Role: RoleSender, Backend: "kernel"}, want: Fail,
			evidence: []string{"the sender falls back to a userspace engine"}, fix: "modprobe pktgen"},
		{name: "sender asking for afpacket", trees: []string{host}, opts: Options{Role: RoleSender, Backend: "afpacket"}, want: Pass},
		{name: "receiver", trees: []string{host}, opts: Options{Role: RoleReceiver}, want: Pass,
			evidence: []string{"receiver XDP: CONFIG_BPF_SYSCALL=y", "AF_XDP (no backend uses it yet): CONFIG_XDP_SOCKETS=y"}},
		{name: "sender with pktgen loaded", trees: []string{vmDebian}, opts: Options{Role: RoleSender}, want: Pass,
			evidence: []string{"kernel pktgen: /proc/net/pktgen present (loaded)", "xdp live frames: kernel 6.1.0-57-cloud-amd64 ≥ 5.18"}},
		{name: "xdp sender on 5.15", trees: []string{host, edit("kernel-5.15")}, opts: Options{Role: RoleSender, Backend: "xdp"}, want: Fail,
			evidence: []string{"older than 5.18", "CONFIG_XDP_SOCKETS: unknown (/boot/config-5.15.0-91-generic: absent; /proc/config.gz: absent)"}, fix: "-"},
		{name: "receiver without native XDP", trees: []string{vmDebian}, opts: Options{Role: RoleReceiver}, host: features("redirect"), want: Pass,
			evidence: []string{"no native XDP"}},
		// A receiver without native XDP counts in generic mode
		// (receiver/xdp_linux.go): a WARN with its fix, not a FAIL.
		{name: "xdp receiver without native XDP", trees: []string{vmDebian}, opts: Options{Role: RoleReceiver, Method: "xdp"}, host: features("redirect"), want: Warn,
			evidence: []string{"no native XDP"}, fix: "runs XDP natively"},
		{name: "xdp sender on an unparsed release", trees: []string{host, edit("kernel-unparsed")}, opts: Options{Role: RoleSender, Backend: "xdp"}, want: Pass,
			evidence: []string{"xdp live frames: kernel vendor-build-7: release not parsed"}},
		{name: "receiver with native XDP", trees: []string{vmDebian}, opts: Options{Role: RoleReceiver}, host: features("basic", "redirect", "ndo-xmit"), want: Pass,
			evidence: []string{"xdp-features of eth0 (netdev netlink): basic redirect ndo-xmit"}},
		{name: "xdp sender without ndo-xmit", trees: []string{vmDebian}, opts: Options{Role: RoleSender, Backend: "xdp"}, host: features("basic"), want: Fail, fix: "-"},
		// The sender's backend and the receiver's method are judged each on
		// its own side: a named kernel backend does not make the receiver's
		// XDP named, nor a named xdp method the sender's.
		{name: "kernel backend, auto method, receiver without native XDP", trees: []string{vmDebian}, opts: Options{Backend: "kernel"}, host: features("redirect"), want: Pass,
			evidence: []string{"no native XDP"}},
		{name: "kernel backend, xdp method, sender without ndo-xmit", trees: []string{vmDebian}, opts: Options{Backend: "kernel", Method: "xdp"}, host: features("basic"), want: Pass,
			evidence: []string{"kernel pktgen: /proc/net/pktgen present (loaded)"}},
		{name: "userspace backend names the xdp sender", trees: []string{vmDebian}, opts: Options{Role: RoleSender, Backend: "userspace"}, host: features("basic"), want: Fail, fix: "-"},
	})
}

func TestCheckClock(t *testing.T) {
	clock := func(c Clock, err error) func(*Host) {
		return func(h *Host) { h.Clock = func() (Clock, error) { return c, err } }
	}
	runFileCases(t, "clock", []fileCase{
		{name: "synchronised by chronyd", trees: []string{host, edit("chronyd")}, host: clock(Clock{Synchronised: true, EstErrorUs: 12, MaxErrorUs: 340}, nil), want: Pass,
			evidence: []string{"synchronised true", "esterror 12 µs, maxerror 340 µs", "time daemons running: chronyd (pid 640)"}},
		{name: "unsynchronised, no daemon", trees: []string{host}, host: clock(Clock{State: 5, MaxErrorUs: 16000000}, nil), want: Warn,
			evidence: []string{"synchronised false", "no time daemon"}, fix: "systemctl enable --now chrony"},
		{name: "unsynchronised, chronyd running", trees: []string{host, edit("chronyd")}, host: clock(Clock{State: 5}, nil), want: Warn, fix: "wait for chronyd (pid 640)"},
		{name: "adjtimex fails", trees: []string{host}, host: clock(Clock{}, errors.New("operation not permitted")), want: Warn, evidence: []string{"adjtimex: operation not permitted"}, fix: "-"},
		{name: "no clock on a snapshot", trees: []string{host}, want: Warn, evidence: []string{"adjtimex: not read"}, fix: "-"},
		{name: "unsynchronised, one clock", trees: []string{host}, opts: Options{OneClock: true}, host: clock(Clock{State: 5}, nil), want: Pass,
			evidence: []string{"on one clock"}},
	})
}

// TestCPUFacts: the fingerprint's CPU model, microcode and the planned
// CPUs' governors, from /proc/cpuinfo and cpufreq.
func TestCPUFacts(t *testing.T) {
	for _, tc := range []struct {
		name  string
		trees []string
		cpus  []int
		// cpu1 overrides cpu1's governor in the tree (a mixed host).
		cpu1 string
		want Facts
	}{
		{name: "this host", trees: []string{host}, want: Facts{CPUModel: "AMD EPYC", Governor: "none"}},
		{name: "VM guest", trees: []string{vmDebian}, want: Facts{CPUModel: "QEMU TCG CPU version 2.5+", Microcode: "0x1000065", Governor: "none"}},
		{name: "powersave on the planned CPU", trees: []string{host, edit("cpufreq-powersave")}, want: Facts{CPUModel: "AMD EPYC", Governor: "powersave"}},
		{name: "two governors", trees: []string{host, edit("cpufreq-powersave")}, cpus: []int{0, 1}, cpu1: "performance",
			want: Facts{CPUModel: "AMD EPYC", Governor: "performance 1; powersave 0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, dir := fixtureRoot(t, tc.trees...)
			if tc.cpu1 != "" {
				if err := os.WriteFile(filepath.Join(dir, "sys/devices/system/cpu/cpu1/cpufreq/scaling_governor"), []byte(tc.cpu1+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			rep, err := Run(context.Background(), Host{Root: r, RootName: dir}, Options{Iface: "eth0", CPUs: tc.cpus})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Facts.CPUModel != tc.want.CPUModel || rep.Facts.Microcode != tc.want.Microcode || rep.Facts.Governor != tc.want.Governor {
				t.Errorf("facts %+v, want %+v", rep.Facts, tc.want)
			}
		})
	}
}

// TestParseIRQBalance: every spelling getopt_long accepts for the banning
// options, and both banned-CPU variables (the list wins over the older
// hex mask).
func TestParseIRQBalance(t *testing.T) {
	for _, tc := range []struct {
		name             string
		cmdline, environ string
		irqs             []int
		mods             []string
		policy, cpus     string
	}{
		{name: "nothing", cmdline: "/usr/sbin/irqbalance\x00--foreground\x00"},
		{name: "long forms", cmdline: "irqbalance\x00--banirq=24\x00--banirq\x0025\x00--banmod=mlx5_comp\x00--policyscript\x00/etc/p.sh\x00",
			irqs: []int{24, 25}, mods: []string{"mlx5_comp"}, policy: "/etc/p.sh"},
		{name: "short forms", cmdline: "irqbalance\x00-i26\x00-i\x0027\x00-m\x00ice\x00-l/etc/q\x00", irqs: []int{26, 27}, mods: []string{"ice"}, policy: "/etc/q"},
		{name: "not a number", cmdline: "irqbalance\x00--banirq=x\x00"},
		{name: "a trailing newline (a fixture file)", cmdline: "irqbalance\x00--banirq=9\x00\n", irqs: []int{9}},
		{name: "banned CPU list", environ: "A=1\x00IRQBALANCE_BANNED_CPULIST=2-3\x00IRQBALANCE_BANNED_CPUS=1\x00", cpus: "2-3"},
		{name: "banned CPU mask", environ: "IRQBALANCE_BANNED_CPUS=00000000,0000000c\x00", cpus: "2-3"},
		{name: "empty list bans nothing", environ: "IRQBALANCE_BANNED_CPULIST=\x00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := parseIRQBalance([]byte(tc.cmdline), []byte(tc.environ))
			if !slices.Equal(a.banIRQs, tc.irqs) || !slices.Equal(a.banMods, tc.mods) || a.policy != tc.policy || a.bannedCPUs != tc.cpus {
				t.Errorf("got %+v, want irqs %v mods %v policy %q cpus %q", a, tc.irqs, tc.mods, tc.policy, tc.cpus)
			}
		})
	}
}

// TestKernelConfigProcGz: without /boot/config-REL the kernel check reads
// /proc/config.gz.
func TestKernelConfigProcGz(t *testing.T) {
	dir := t.TempDir()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("CONFIG_BPF_SYSCALL=y\n# CONFIG_NET_PKTGEN is not set\nCONFIG_XDP_SOCKETS=y\n"))
	zw.Close()
	if err := os.MkdirAll(filepath.Join(dir, "proc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "proc/config.gz"), gz.Bytes(), 0o444); err != nil {
		t.Fatal(err)
	}
	r, err := topology.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	k := readKernelConfig(&env{h: Host{Root: r}, kernel: "6.18.0"})
	if k.err != nil || k.from != "/proc/config.gz" {
		t.Fatalf("config from %q, err %v", k.from, k.err)
	}
	if on, known := k.on("CONFIG_NET_PKTGEN"); on || !known {
		t.Errorf("CONFIG_NET_PKTGEN on %v known %v, want off and known", on, known)
	}
	if on, _ := k.on("CONFIG_XDP_SOCKETS"); !on {
		t.Error("CONFIG_XDP_SOCKETS off, want on")
	}
	if got := k.say("CONFIG_NET_PKTGEN"); got != "CONFIG_NET_PKTGEN: not set (/proc/config.gz)" {
		t.Errorf("say %q", got)
	}
}

func TestKernelAtLeast(t *testing.T) {
	for _, tc := range []struct {
		rel       string
		ok, known bool
	}{
		{"5.18.0", true, true}, {"5.17.15-arch1", false, true}, {"6.1.0-57-cloud-amd64", true, true},
		{"4.19.0", false, true}, {"5.18-rc1", true, true}, {"6", false, false}, {"x.y", false, false},
	} {
		if ok, known := kernelAtLeast(tc.rel, 5, 18); ok != tc.ok || known != tc.known {
			t.Errorf("%s: %v %v, want %v %v", tc.rel, ok, known, tc.ok, tc.known)
		}
	}
}

// TestOptionsCheck: each bad option is refused by Run and Fix with an
// error naming the field and what would be valid, before any check reads
// the host.
func TestOptionsCheck(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want []string
	}{
		{Options{Role: "both"}, nil},
		{Options{Backend: "kernel", Method: "afpacket", FrameSize: 64, IRQBalance: "ignore"}, nil},
		{Options{Backend: "auto", Method: "auto", FrameSize: 65535}, nil},
		{Options{Role: "relay"}, []string{"role", `"relay"`, "sender"}},
		{Options{FrameSize: 63}, []string{"frame size 63", "64 to 65535"}},
		{Options{FrameSize: 65536}, []string{"frame size 65536", "64 to 65535"}},
		{Options{FrameSize: -1}, []string{"frame size -1"}},
		{Options{IRQBalance: "kill"}, []string{"irqbalance", `"kill"`, "ignore"}},
		{Options{Backend: "dpdk"}, []string{"backend", `"dpdk"`, "kernel", "userspace"}},
		{Options{Backend: "afpacket", Method: "kernel"}, []string{"method", `"kernel"`, "xdp", "afpacket"}},
	} {
		err := tc.o.Check()
		if len(tc.want) == 0 {
			if err != nil {
				t.Errorf("%+v: %v", tc.o, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%+v: no error, want one saying %q", tc.o, tc.want)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: %q lacks %q", tc.o, err, w)
			}
		}
		o := tc.o
		o.Iface = "eth0"
		r, oerr := topology.OpenRoot(t.TempDir())
		if oerr != nil {
			t.Fatal(oerr)
		}
		defer r.Close()
		h := Host{Root: r, RootName: "fixture"}
		if _, rerr := Run(context.Background(), h, o); rerr == nil || !strings.Contains(rerr.Error(), err.Error()) {
			t.Errorf("Run %+v: %v, want %q", tc.o, rerr, err)
		}
		if _, ferr := Fix(context.Background(), h, o, FixOptions{Classes: []FixClass{FixRPS}, Journal: topology.JournalOptions{StateDir: t.TempDir()}}); ferr == nil || !strings.Contains(ferr.Error(), err.Error()) {
			t.Errorf("Fix %+v: %v, want %q", tc.o, ferr, err)
		}
	}
}
