//go:build linux && traffic

package main

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
)

// These run `linerate send` end to end against the real pktgen, inside the
// qemu guest of cmd/linerate/internal/vmtest (LINERATE_VMTEST_GUEST=1); elsewhere they skip.
func guestVeth(t *testing.T) string {
	t.Helper()
	if os.Getenv("LINERATE_VMTEST_GUEST") != "1" {
		t.Skip("needs the real pktgen module: runs inside the qemu guest of cmd/linerate/internal/vmtest")
	}
	la := netlink.NewLinkAttrs()
	la.Name = "lrsd0"
	if err := netlink.LinkAdd(&netlink.Veth{LinkAttrs: la, PeerName: "lrsd1"}); err != nil {
		t.Fatalf("add veth pair: %v", err)
	}
	t.Cleanup(func() {
		if l, err := netlink.LinkByName("lrsd0"); err == nil {
			netlink.LinkDel(l)
		}
	})
	var mac string
	for _, n := range []string{"lrsd0", "lrsd1"} {
		os.WriteFile("/proc/sys/net/ipv6/conf/"+n+"/disable_ipv6", []byte("1\n"), 0o644)
		l, err := netlink.LinkByName(n)
		if err != nil {
			t.Fatal(err)
		}
		if err := netlink.LinkSetUp(l); err != nil {
			t.Fatal(err)
		}
		mac = l.Attrs().HardwareAddr.String()
	}
	for i := 0; i < 50; i++ {
		if b, _ := os.ReadFile("/sys/class/net/lrsd0/carrier"); strings.TrimSpace(string(b)) == "1" {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	return mac
}

func peerRx(t *testing.T) uint64 {
	b, err := os.ReadFile("/sys/class/net/lrsd1/statistics/rx_packets")
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return n
}

type sendJSON struct {
	Backend  string   `json:"backend"`
	Packets  uint64   `json:"packets"`
	Errors   uint64   `json:"errors"`
	USec     uint64   `json:"usec"`
	PPS      float64  `json:"pps"`
	L2BPS    float64  `json:"l2_bps"`
	L1BPS    float64  `json:"l1_bps"`
	Warnings []string `json:"warnings"`
	Threads  []struct {
		CPU     int     `json:"cpu"`
		Packets uint64  `json:"packets"`
		Errors  uint64  `json:"errors"`
		USec    uint64  `json:"usec"`
		PPS     float64 `json:"pps"`
	} `json:"threads"`
}

func TestGuestSend(t *testing.T) {
	mac := guestVeth(t)
	base := []string{"send", "--iface", "lrsd0", "--dst", "198.18.0.2", "--src", "198.18.1.1", "--dst-mac", mac, "--json"}
	before := peerRx(t)
	code, out, errOut := linerate(t, append(base, "--count", "30001", "--cpus", "0,1")...)
	if code != 0 {
		t.Fatalf("send exit %d: %s", code, errOut)
	}
	var s sendJSON
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := peerRx(t) - before
	if s.Backend != "kernel" || s.Packets != 30001 || got != 30001 || len(s.Threads) != 2 || s.Threads[0].Packets != 15001 || s.Threads[1].CPU != 1 {
		t.Fatalf("sent %+v, peer received %d", s, got)
	}
	if s.PPS <= 0 || s.L1BPS != s.PPS*84*8 || s.L2BPS != s.PPS*64*8 {
		t.Errorf("rates: %+v", s)
	}

	// Default threads on a veth (no IRQs): one, on the first online CPU.
	before = peerRx(t)
	code, out, errOut = linerate(t, append(base, "--duration", "300ms", "--rate", "5000")...)
	if code != 0 {
		t.Fatalf("timed send exit %d: %s", code, errOut)
	}
	json.Unmarshal([]byte(out), &s)
	if got := peerRx(t) - before; len(s.Threads) != 1 || s.Threads[0].CPU != 0 || got != s.Packets || s.Packets == 0 || s.Packets > 3000 {
		t.Errorf("timed, rate-limited send: %+v, peer got %d (want about 1500 at 5000 pps for 0.3 s)", s, got)
	}

	// burst on veth: refused, unless the fallback is allowed.
	code, _, errOut = linerate(t, append(base, "--count", "1000", "--burst", "16")...)
	if code != 1 || !strings.Contains(errOut, "burst") || !strings.Contains(errOut, "lrsd0") {
		t.Errorf("burst on veth: exit %d %q", code, errOut)
	}
	code, out, errOut = linerate(t, append(base, "--count", "1000", "--burst", "16", "--allow-fallback")...)
	if code != 0 || json.Unmarshal([]byte(out), &s) != nil || len(s.Warnings) == 0 || s.Packets != 1000 {
		t.Errorf("burst with fallback: exit %d %s %s", code, out, errOut)
	}
	// After a run killed outright, `linerate pktgen reset` detaches what it left.
	if err := os.WriteFile("/proc/net/pktgen/kpktgend_1", []byte("add_device lrsd0@1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/proc/net/pktgen/lrsd0@1"); err != nil {
		t.Fatalf("device entry not attached: %v", err)
	}
	if code, out, errOut := linerate(t, "pktgen", "reset"); code != 0 || !strings.Contains(out, "reset") {
		t.Errorf("pktgen reset: exit %d %s %s", code, out, errOut)
	}
	ents, _ := os.ReadDir("/proc/net/pktgen")
	for _, e := range ents {
		if n := e.Name(); n != "pgctrl" && !strings.HasPrefix(n, "kpktgend_") {
			t.Errorf("pktgen device %s left attached", n)
		}
	}
}
