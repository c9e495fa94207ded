package doctor

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/linerate/linerate/topology"
)

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
