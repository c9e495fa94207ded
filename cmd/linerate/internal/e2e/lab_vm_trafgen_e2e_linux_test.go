//go:build linux && traffic

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/linerate/linerate/cmd/linerate/internal/lab"
	"github.com/linerate/linerate/receiver"
)

// trafgenInstall says where trafgen comes from (requireTool).
const trafgenInstall = "make vmtest-deps installs Debian's netsniff-ng"

// trafgenGuestArgs are lab up's flags that give the VM hosts this
// machine's trafgen (none when it is not installed: the trafgen subtest
// then skips, or fails in CI).
func trafgenGuestArgs() []string {
	p, err := exec.LookPath("trafgen")
	if err != nil {
		return nil
	}
	return []string{"--guest-file", p}
}

// checkVMTrafgen is trafgen in a VM host of lab up --guest-file: `lab
// exec` starts `linerate recv --method xdp` in r1 and, once it is armed,
// trafgen in s1 for n frames of 64 B with pktgen's header (sequence a
// constant 1), as bench/vm-engines.sh runs it, at vmRate (unpaced, a TCG
// guest's tap drops what r1 does not take in time: 186 of 20 000 once,
// and 40 of 10 000 at vmRate under CI's load). trafgen says it sent n and
// the switch's port from s1 took them; the receiver counted, in one stream
// s1 → r1 (every copy but the first a duplicate), exactly the frames the
// switch's port toward r1 handed it, apart from those without pktgen's
// header, and those and the port's drops (link and qdisc) are n. Bad input:
// a host the lab lacks, and a command that fails, are errors naming
// them.
func checkVMTrafgen(t *testing.T, bin, name string) {
	const n = 10000
	lx := func(host, cmd string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, bin, "lab", "exec", "--name", name, host, cmd).CombinedOutput()
		if err != nil {
			t.Fatalf("lab exec %s %q: %v\n%s", host, cmd, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	out, err := exec.Command(bin, "lab", "exec", "--name", name, "r9", "true").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "r9 is not one of its running VM hosts (running: r1, s1, s2)") {
		t.Errorf("lab exec r9: %v, %s: want an error naming the running hosts", err, out)
	}
	out, err = exec.Command(bin, "lab", "exec", "--name", name, "s1", "echo", "no;", "exit", "3").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), `no`) || !strings.Contains(string(out), `"echo no; exit 3" exited with status 3`) {
		t.Errorf("lab exec s1 'echo no; exit 3': %v, %s: want its output, then exit 1 naming status 3", err, out)
	}

	addr := func(host string) (mac, ip string) {
		mac = lx(host, "cat /sys/class/net/data0/address")
		f := strings.Fields(lx(host, "ip -4 -o addr show dev data0"))
		if len(f) < 4 {
			t.Fatalf("%s: no IPv4 address on data0: %v", host, f)
		}
		return mac, strings.Split(f[3], "/")[0]
	}
	smac, src := addr("s1")
	dmac, dst := addr("r1")
	hex := func(mac string) string { return "0x" + strings.ReplaceAll(mac, ":", ", 0x") }
	cfg := fmt.Sprintf("{ %s, %s, 0x08, 0x00, 0x45, 0x00, 0x00, 0x2e, 0x00, 0x00, 0x00, 0x00, 0x20, 0x11, csumip(14, 33), %s, %s, "+
		"0x00, 0x09, 0x00, 0x09, 0x00, 0x1a, 0x00, 0x00, const32(0xbe9be955), const32(1), const32(0), const32(0), fill(0x00, 2) }",
		hex(dmac), hex(smac), strings.ReplaceAll(src, ".", ", "), strings.ReplaceAll(dst, ".", ", "))

	lx("r1", "/bin/linerate recv --iface data0 --method xdp --json >/tmp/tg.json 2>/tmp/tg.err & echo $! >/tmp/tg.pid")
	for deadline := time.Now().Add(time.Minute); !strings.Contains(lx("r1", "cat /tmp/tg.err"), "armed: counting"); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("r1's receiver not armed within a minute: %s", lx("r1", "cat /tmp/tg.err"))
		}
	}
	before := switchLinkCounts(t, name)
	tg := lx("s1", fmt.Sprintf("trafgen --dev data0 --cpus 1 -Q -b %spps -n %d '%s' 2>&1", vmRate, n, cfg))
	if !strings.Contains(tg, fmt.Sprintf("%d packets outgoing", n)) {
		t.Errorf("trafgen -n %d in s1 does not say it sent %d:\n%s", n, n, tg)
	}
	time.Sleep(time.Second) // the lab run's drain
	raw := lx("r1", "kill -TERM $(cat /tmp/tg.pid); while kill -0 $(cat /tmp/tg.pid) 2>/dev/null; do sleep 0.1; done; cat /tmp/tg.json")
	after := switchLinkCounts(t, name)
	var rep receiver.Report
	if err := json.Unmarshal([]byte(raw), &rep); err != nil {
		t.Fatalf("r1's receiver report: %v\n%s", err, raw)
	}
	if len(rep.Streams) != 1 {
		t.Fatalf("r1 counted %d streams, want trafgen's one: %+v", len(rep.Streams), rep.Streams)
	}
	s := rep.Streams[0]
	if s.Src.String() != src || s.Dst.String() != dst || s.Received == 0 || s.Duplicates != s.Received-1 {
		t.Errorf("stream %s → %s: received %d, %d duplicates: want %s → %s, every copy of sequence 1 but the first a duplicate", s.Src, s.Dst, s.Received, s.Duplicates, src, dst)
	}
	// The books: r1 counted every frame the switch passed toward it, and
	// what it passed and what r1's tap dropped (a TCG guest that did not
	// drain it in time: its link and qdisc drops) are trafgen's n.
	toR1 := after["r1"].tx - before["r1"].tx
	dropped := after["r1"].dropped - before["r1"].dropped
	if toR1 != s.Received+rep.OtherPackets || toR1+dropped != n+rep.OtherPackets {
		t.Errorf("the switch port toward r1 passed %d frames and dropped %d; r1 counted %d test frames and %d others: want every frame passed counted, passed + dropped = trafgen's %d", toR1, dropped, s.Received, rep.OtherPackets, n)
	}
	if fromS1 := after["s1"].rx - before["s1"].rx; fromS1 < n {
		t.Errorf("the switch port from s1 took %d frames, fewer than trafgen's %d", fromS1, n)
	}
	t.Logf("trafgen -n %d in s1 (guest file with its libraries): r1 counted %d in one stream, the switch passed %d toward r1 (%d without the header) and dropped %d there", n, s.Received, toR1, rep.OtherPackets, dropped)
}

// linkCounts are a switch port's link counters, and what it dropped on
// its way out: its link's tx drops and its qdisc's.
type linkCounts struct{ rx, tx, dropped uint64 }

// switchLinkCounts reads the link counters of the lab's switch ports
// (lab up's process holds the lab; its switch namespace is readable by
// name).
func switchLinkCounts(t *testing.T, name string) map[string]linkCounts {
	t.Helper()
	out, err := exec.Command("ip", "-n", lab.Prefix(name)+"sw", "-s", "-j", "link", "show").Output()
	if err != nil {
		t.Fatalf("ip -s link in the switch namespace of lab %s: %v", name, err)
	}
	var links []struct {
		Name  string `json:"ifname"`
		Stats struct {
			Rx struct {
				Packets uint64 `json:"packets"`
			} `json:"rx"`
			Tx struct {
				Packets uint64 `json:"packets"`
				Dropped uint64 `json:"dropped"`
			} `json:"tx"`
		} `json:"stats64"`
	}
	if err := json.Unmarshal(out, &links); err != nil {
		t.Fatalf("ip -s -j link: %v\n%s", err, out)
	}
	m := map[string]linkCounts{}
	for _, l := range links {
		c := linkCounts{rx: l.Stats.Rx.Packets, tx: l.Stats.Tx.Packets, dropped: l.Stats.Tx.Dropped}
		out, err := exec.Command("ip", "netns", "exec", lab.Prefix(name)+"sw", "tc", "-s", "-j", "qdisc", "show", "dev", l.Name).Output()
		if err != nil {
			t.Fatalf("tc -s qdisc show dev %s in the switch namespace of lab %s: %v", l.Name, name, err)
		}
		var qdiscs []struct {
			Drops uint64 `json:"drops"`
		}
		if err := json.Unmarshal(out, &qdiscs); err != nil {
			t.Fatalf("tc -s -j qdisc show dev %s: %v\n%s", l.Name, err, out)
		}
		for _, q := range qdiscs {
			c.dropped += q.Drops
		}
		m[l.Name] = c
	}
	return m
}
