//go:build linux && traffic

package pktgen

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
)

// These tests need the real kernel pktgen. They run inside the qemu guest
// that internal/vmtest boots (LINERATE_VMTEST_GUEST=1, pktgen and veth
// loaded); anywhere else they skip.
func guestOnly(t *testing.T) {
	t.Helper()
	if os.Getenv("LINERATE_VMTEST_GUEST") != "1" {
		t.Skip("needs the real pktgen module: runs inside the qemu guest of internal/vmtest")
	}
}

// vethPair makes lrpg0 <-> lrpg1, both up, and returns the peer's MAC.
// guestSysctl sets a sysctl of the guest for the test and restores it.
func guestSysctl(t *testing.T, path, value string) {
	t.Helper()
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	if err := os.WriteFile(path, []byte(value+"\n"), 0o644); err != nil {
		t.Fatalf("set %s to %s: %v", path, value, err)
	}
	t.Cleanup(func() { _ = os.WriteFile(path, old, 0o644) })
}

func vethPair(t *testing.T) string {
	t.Helper()
	la := netlink.NewLinkAttrs()
	la.Name = "lrpg0"
	if err := netlink.LinkAdd(&netlink.Veth{LinkAttrs: la, PeerName: "lrpg1"}); err != nil {
		t.Fatalf("add veth pair: %v", err)
	}
	t.Cleanup(func() {
		if l, err := netlink.LinkByName("lrpg0"); err == nil {
			netlink.LinkDel(l)
		}
	})
	var mac string
	for _, n := range []string{"lrpg0", "lrpg1"} {
		l, err := netlink.LinkByName(n)
		if err != nil {
			t.Fatal(err)
		}
		// No IPv6: its neighbour discovery and MLD would add packets to
		// the peer's counter that pktgen did not send.
		if err := os.WriteFile("/proc/sys/net/ipv6/conf/"+n+"/disable_ipv6", []byte("1\n"), 0o644); err != nil && !os.IsNotExist(err) {
			t.Fatalf("disable IPv6 on %s: %v", n, err)
		}
		if err := netlink.LinkSetUp(l); err != nil {
			t.Fatal(err)
		}
		mac = l.Attrs().HardwareAddr.String()
	}
	// pktgen refuses a device without carrier: wait for the pair to come up.
	for i := 0; i < 50; i++ {
		if b, _ := os.ReadFile("/sys/class/net/lrpg0/carrier"); strings.TrimSpace(string(b)) == "1" {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	return mac
}

func rxPackets(t *testing.T, dev string) uint64 {
	t.Helper()
	b, err := os.ReadFile("/sys/class/net/" + dev + "/statistics/rx_packets")
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return n
}

func guestConfig(t *testing.T, mac string) Config {
	c := baseConfig()
	c.Device, c.CPUs, c.Count = "lrpg0", []int{0}, 50000
	c.DstMAC, _ = parseMAC(mac)
	return c
}

func noDevicesLeft(t *testing.T) {
	t.Helper()
	ents, err := os.ReadDir(DefaultProcDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if n := e.Name(); n != "pgctrl" && !strings.HasPrefix(n, "kpktgend_") {
			t.Errorf("device entry %s left in %s", n, DefaultProcDir)
		}
	}
}

func TestGuestKernelCount(t *testing.T) {
	guestOnly(t)
	mac := vethPair(t)
	k := NewKernel(nil)
	if v, err := k.Available(); err != nil || !strings.Contains(v, "Packet Generator") {
		t.Fatalf("pgctrl: %q %v", v, err)
	}
	cfg := guestConfig(t, mac)
	cfg.CPUs = []int{0, 1}
	cfg.Counts = SplitCount(100001, 2)
	// Both threads start at one instant into one veth: the peer's
	// backlog (netdev_max_backlog, 1000 by default) overflowing would be
	// pktgen errors (NET_XMIT_DROP, sent again), the guest's, not ours.
	guestSysctl(t, "/proc/sys/net/core/netdev_max_backlog", "200000")
	before := rxPackets(t, "lrpg1")
	sum, err := k.Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := rxPackets(t, "lrpg1") - before
	if sum.Packets != 100001 || sum.Threads[0].Packets != 50001 || sum.Threads[1].Packets != 50000 || got != 100001 {
		t.Fatalf("sent %d (%d+%d per Result), peer received %d; want 100001 everywhere", sum.Packets, sum.Threads[0].Packets, sum.Threads[1].Packets, got)
	}
	if sum.Errors != 0 || sum.PPS <= 0 || sum.USec == 0 {
		t.Errorf("summary %+v", sum)
	}
	t.Logf("pktgen on veth under TCG: %d packets in %d us = %.0f pps", sum.Packets, sum.USec, sum.PPS)
	noDevicesLeft(t)
}

func TestGuestKernelDurationAndStop(t *testing.T) {
	guestOnly(t)
	mac := vethPair(t)
	cfg := guestConfig(t, mac)
	cfg.Count, cfg.Duration = 0, 300*time.Millisecond
	before := rxPackets(t, "lrpg1")
	samples := 0
	sum, err := NewKernel(nil).Run(context.Background(), cfg, func(p Progress) { samples++ })
	if err != nil {
		t.Fatal(err)
	}
	if got := rxPackets(t, "lrpg1") - before; sum.Packets == 0 || got != sum.Packets || samples == 0 {
		t.Fatalf("timed run: sent %d, peer got %d, %d progress samples", sum.Packets, got, samples)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	cfg.Duration = time.Hour
	sum, err = NewKernel(nil).Run(ctx, cfg, nil)
	if err != nil || !sum.Interrupted || sum.Packets == 0 {
		t.Fatalf("cancelled run: %+v %v", sum, err)
	}
	noDevicesLeft(t)
}

func TestGuestKernelRefusals(t *testing.T) {
	guestOnly(t)
	mac := vethPair(t)
	k := NewKernel(nil)
	k.defaults()
	// burst on veth: the kernel says ENOTSUPP (524 before 6.15, EOPNOTSUPP after).
	cfg := guestConfig(t, mac)
	cfg.Burst = 32
	_, err := k.Run(context.Background(), cfg, nil)
	if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "burst") {
		t.Fatalf("burst on veth: %v, want ErrNotSupported", err)
	}
	t.Logf("burst on veth: %v", err)
	cfg.AllowFallback = true
	sum, err := k.Run(context.Background(), cfg, nil)
	if err != nil || len(sum.Warnings) == 0 || sum.Packets != cfg.Count {
		t.Fatalf("burst with fallback: %+v %v", sum, err)
	}
	// A bad command is EINVAL with "No such parameter"; an unknown flag is
	// a successful write whose Result says it is unknown.
	if err := k.ctl("reset"); err != nil {
		t.Fatal(err)
	}
	defer k.ctl("reset")
	if err := k.addDevice(context.Background(), 0, "lrpg0@0"); err != nil {
		t.Fatal(err)
	}
	err = k.set("lrpg0@0", "bogus 1", true)
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "No such parameter") {
		t.Errorf("bogus parameter: %v", err)
	}
	err = k.set("lrpg0@0", "flag BOGUS", true)
	var ce *CommandError
	if !errors.As(err, &ce) || ce.Err != nil || !strings.Contains(ce.Result, "unknown") {
		t.Errorf("unknown flag: %v", err)
	}
	if err := k.addDevice(context.Background(), 1, "nosuch0@1"); !errors.Is(err, ErrNoDevice) {
		t.Errorf("missing device: %v", err)
	}
	feats, err := k.Probe(context.Background(), "lrpg0", 0)
	if err != nil || feats.Burst || feats.CloneSkb || !feats.QueueXmit || feats.NodeFlag != "NODE" {
		t.Errorf("veth features on this kernel: %+v %v", feats, err)
	}
	noDevicesLeft(t)
}
