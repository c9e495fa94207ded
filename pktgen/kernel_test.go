package pktgen

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func baseConfig() Config {
	mac, _ := net.ParseMAC("02:00:00:00:00:02")
	return Config{
		Device: "eth0", CPUs: []int{0, 1}, Count: 5000, PktSize: 60,
		DstMin: netip.MustParseAddr("198.18.0.2"), SrcMin: netip.MustParseAddr("198.18.1.1"), SrcPerThread: true,
		DstMAC: mac, Flags: []string{"NO_TIMESTAMP", "QUEUE_MAP_CPU"},
	}
}

func kernelOn(f *fakePktgen) *Kernel {
	return &Kernel{Proc: f, PollInterval: 5 * time.Millisecond, Sleep: func(context.Context, time.Duration) error { return nil }}
}

func TestKernelRunCount(t *testing.T) {
	f := newFakePktgen(4, "eth0")
	cfg := baseConfig()
	sum, err := kernelOn(f).Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Packets != 10000 || len(sum.Threads) != 2 || sum.Threads[1].CPU != 1 || sum.Threads[1].Entry != "eth0@1" || sum.Backend != "kernel" {
		t.Fatalf("summary %+v", sum)
	}
	if sum.Threads[0].Src != "198.18.1.1" || sum.Threads[1].Src != "198.18.1.2" {
		t.Errorf("per-thread sources %q %q", sum.Threads[0].Src, sum.Threads[1].Src)
	}
	if sum.PPS <= 0 || sum.L1BPS != sum.PPS*84*8 || sum.L2BPS != sum.PPS*64*8 {
		t.Errorf("rates pps %v l2 %v l1 %v", sum.PPS, sum.L2BPS, sum.L1BPS)
	}
	for _, w := range []string{"pgctrl: reset", "kpktgend_1: add_device eth0@1", "eth0@1: src_min 198.18.1.2", "eth0@0: count 5000", "eth0@0: flag QUEUE_MAP_CPU"} {
		if !f.wrote(w) {
			t.Errorf("never wrote %q; log:\n%s", w, strings.Join(f.log, "\n"))
		}
	}
	if f.resets != 2 || len(f.devs) != 0 {
		t.Errorf("resets %d, devices left %d: pktgen must be reset before and after", f.resets, len(f.devs))
	}
}

// pgctrl's start that returns before the threads have picked up their
// T_RUN (a loaded guest: the write waits only 125 ms) is not the end of
// the run: Run waits for every device's result and counts every packet,
// as a paced count run in the guest once failed with "no run result
// (Result: Starting)".
func TestKernelRunStartReturnsEarly(t *testing.T) {
	f := newFakePktgen(4, "eth0")
	f.lateRun = 300 * time.Millisecond
	sum, err := kernelOn(f).Run(context.Background(), baseConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Packets != 10000 || len(sum.Threads) != 2 {
		t.Fatalf("summary %+v", sum)
	}
}

// A paced run's threads report their pacing wait (the idle time of
// their Result, at most a gap per packet: DeviceFile.PacingWaitUSec); an
// unpaced run's report none.
func TestKernelRunPacingWait(t *testing.T) {
	f := newFakePktgen(4, "eth0")
	cfg := baseConfig()
	cfg.DelayNS = 200000
	sum, err := kernelOn(f).Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, th := range sum.Threads {
		if th.PacingWaitUSec != 5000*100 {
			t.Errorf("thread %s: pacing wait %d µs, want the fake's half gap per packet, %d", th.Entry, th.PacingWaitUSec, 5000*100)
		}
	}
	sum, err = kernelOn(f).Run(context.Background(), baseConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if w := sum.Threads[0].PacingWaitUSec; w != 0 {
		t.Errorf("unpaced: pacing wait %d µs", w)
	}
}

// A kpktgend thread that does its rem_device_all late (a loaded guest:
// the kernel's write waits only 125 ms for it) removes the devices added
// since; the run adds and configures them again and counts every packet,
// as a run in the VM lab once failed with "count 0: no such file".
func TestKernelRunLateRemoval(t *testing.T) {
	for _, late := range []int{1, 2} {
		f := newFakePktgen(4, "eth0")
		f.lateRemovals = late
		sum, err := kernelOn(f).Run(context.Background(), baseConfig(), nil)
		if err != nil || sum.Packets != 10000 || len(sum.Threads) != 2 {
			t.Fatalf("%d late removals: %+v, %v", late, sum, err)
		}
		adds := 0
		for _, l := range f.log {
			if strings.Contains(l, ": add_device ") {
				adds++
			}
		}
		if adds != 2+late {
			t.Errorf("%d late removals: %d add_device writes, want %d", late, adds, 2+late)
		}
	}
}

func TestKernelRunDurationAndProgress(t *testing.T) {
	f := newFakePktgen(2, "eth0")
	cfg := baseConfig()
	cfg.Count, cfg.Duration = 0, 60*time.Millisecond
	var samples int
	sum, err := kernelOn(f).Run(context.Background(), cfg, func(p Progress) {
		if len(p.Threads) == 2 {
			samples++
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Packets == 0 || samples == 0 || sum.Interrupted || !f.wrote("pgctrl: stop") || !f.wrote("eth0@0: count 0") {
		t.Errorf("duration run: %+v, %d samples", sum, samples)
	}
}

func TestKernelRunRepeatsLostStop(t *testing.T) {
	f := newFakePktgen(2, "eth0")
	f.lostStops = 2
	cfg := baseConfig()
	cfg.Count, cfg.Duration = 0, 20*time.Millisecond
	done := make(chan error, 1)
	go func() {
		_, err := kernelOn(f).Run(context.Background(), cfg, nil)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil || f.lostStops != 0 {
			t.Fatalf("err %v, %d stops still to lose", err, f.lostStops)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a lost stop was never repeated: the run never ended")
	}
}

func TestKernelRunCancelStops(t *testing.T) {
	f := newFakePktgen(2, "eth0")
	cfg := baseConfig()
	cfg.Count, cfg.Duration = 0, time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(30*time.Millisecond, cancel)
	sum, err := kernelOn(f).Run(ctx, cfg, nil)
	if err != nil || !sum.Interrupted || !f.wrote("pgctrl: stop") || f.resets != 2 {
		t.Fatalf("cancel: %+v %v resets %d", sum, err, f.resets)
	}
}

func TestKernelErrors(t *testing.T) {
	tests := []struct {
		name  string
		setup func(*fakePktgen, *Config)
		want  error
		text  []string
	}{
		{"no such interface", func(f *fakePktgen, c *Config) { c.Device = "eth9" }, ErrNoDevice, []string{`"eth9"`, "does not exist"}},
		{"interface down", func(f *fakePktgen, c *Config) { f.ifaces["eth0"] = false }, ErrDeviceDown, []string{"ip link set eth0 up"}},
		{"busy forever", func(f *fakePktgen, c *Config) { f.busyFor = 100 }, ErrBusy, []string{"eth0@0"}},
		{"no thread for cpu", func(f *fakePktgen, c *Config) { c.CPUs = []int{0, 7} }, fs.ErrNotExist, []string{"cpu 7", "kpktgend_7"}},
		{"unknown flag is a refused successful write", func(f *fakePktgen, c *Config) { c.Flags = []string{"MACSRC_RND"} }, ErrRefused, []string{"flag MACSRC_RND", "unknown"}},
		{"bad tos is a refused successful write", func(f *fakePktgen, c *Config) { c.HasTOS, c.TOS = true, 0x1ff }, ErrConfig, []string{"tos"}},
		{"burst on veth without fallback", func(f *fakePktgen, c *Config) {
			f.ifaces["veth0"] = true
			c.Device, c.Burst = "veth0", 32
		}, ErrNotSupported, []string{"ENOTSUPP", "burst", "veth0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakePktgen(2, "eth0")
			cfg := baseConfig()
			tt.setup(f, &cfg)
			_, err := kernelOn(f).Run(context.Background(), cfg, nil)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			for _, s := range tt.text {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
			if tt.want != ErrConfig && (f.resets != 2 || len(f.devs) != 0) {
				t.Errorf("after a failed run: %d resets, %d devices attached", f.resets, len(f.devs))
			}
		})
	}
}

func TestKernelBusyRetried(t *testing.T) {
	f := newFakePktgen(2, "eth0")
	f.busyFor = 2
	if _, err := kernelOn(f).Run(context.Background(), baseConfig(), nil); err != nil {
		t.Fatal(err)
	}
}

func TestKernelFallbacks(t *testing.T) {
	f := newFakePktgen(2, "veth0")
	f.modern = false
	cfg := baseConfig()
	cfg.Device, cfg.Burst, cfg.CloneSkb, cfg.AllowFallback = "veth0", 32, 10, true
	cfg.HasNode, cfg.Node, cfg.Flags = true, 0, []string{"NODE"}
	sum, err := kernelOn(f).Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Warnings) != 2 || !strings.Contains(sum.Warnings[0], "clone_skb 0") || !strings.Contains(sum.Warnings[1], "burst 1") {
		t.Errorf("warnings %q", sum.Warnings)
	}
	if !f.wrote("veth0@0: flag NODE_ALLOC") {
		t.Error("no NODE_ALLOC fallback on a kernel that does not know NODE")
	}
}

func TestKernelNoPktgen(t *testing.T) {
	k := &Kernel{Proc: DirProc{Dir: t.TempDir() + "/none"}}
	_, err := k.Run(context.Background(), baseConfig(), nil)
	if !errors.Is(err, ErrNoPktgen) || !strings.Contains(err.Error(), "modprobe pktgen") {
		t.Fatalf("err = %v", err)
	}
}

func TestProbe(t *testing.T) {
	f := newFakePktgen(2, "eth0", "veth0")
	feats, err := kernelOn(f).Probe(context.Background(), "veth0", 1)
	if err != nil {
		t.Fatal(err)
	}
	if feats.Burst || feats.CloneSkb || feats.NodeFlag != "NODE" || !strings.Contains(feats.Version, "2.75") {
		t.Errorf("veth features %+v", feats)
	}
	f.modern = false
	feats, err = kernelOn(f).Probe(context.Background(), "eth0", 0)
	if err != nil || !feats.Burst || !feats.CloneSkb || feats.NodeFlag != "NODE_ALLOC" || len(f.devs) != 0 {
		t.Errorf("eth0 features %+v %v, %d devices left", feats, err, len(f.devs))
	}
}

func TestSplitCount(t *testing.T) {
	if got := SplitCount(10, 3); got[0] != 4 || got[1] != 3 || got[2] != 3 {
		t.Errorf("SplitCount(10,3) = %v", got)
	}
	f := newFakePktgen(4, "eth0")
	cfg := baseConfig()
	cfg.CPUs, cfg.Counts, cfg.Queues, cfg.Flags = []int{2, 3}, SplitCount(11, 2), []int{0, 1}, nil
	sum, err := kernelOn(f).Run(context.Background(), cfg, nil)
	if err != nil || sum.Packets != 11 || sum.Threads[0].Packets != 6 || !f.wrote("eth0@3q1: queue_map_max 1") {
		t.Errorf("%+v %v", sum, err)
	}
}

// Two devices on one pktgen thread (dev@N entries, one per TX queue):
// the thread is cleared once, both are added to it, each is configured
// with its own queue, count and source, and each is its own stream in
// the summary, its first frame its own "started:".
func TestKernelDevicesPerThread(t *testing.T) {
	f := newFakePktgen(4, "eth0")
	cfg := baseConfig()
	cfg.CPUs, cfg.Queues, cfg.Counts, cfg.Flags = []int{2, 2}, []int{0, 2}, SplitCount(1001, 2), nil
	k := kernelOn(f)
	base := time.Now().UnixMicro() / 1e12 * 1e12 * 1000 // undoes the fake's modulus, as in TestKernelRunAtInstant
	k.MonoOffset = func() (int64, error) { return base, nil }
	sum, err := k.Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"pgctrl: reset",
		"kpktgend_2: rem_device_all",
		"kpktgend_2: add_device eth0@2q0",
		"kpktgend_2: add_device eth0@2q2",
		"eth0@2q0: count 501", "eth0@2q0: pkt_size 60", "eth0@2q0: delay 0",
		"eth0@2q0: dst_min 198.18.0.2", "eth0@2q0: dst_max 198.18.0.2", "eth0@2q0: src_min 198.18.1.1", "eth0@2q0: src_max 198.18.1.1",
		"eth0@2q0: dst_mac 02:00:00:00:00:02", "eth0@2q0: queue_map_min 0", "eth0@2q0: queue_map_max 0",
		"eth0@2q2: count 500", "eth0@2q2: pkt_size 60", "eth0@2q2: delay 0",
		"eth0@2q2: dst_min 198.18.0.2", "eth0@2q2: dst_max 198.18.0.2", "eth0@2q2: src_min 198.18.1.2", "eth0@2q2: src_max 198.18.1.2",
		"eth0@2q2: dst_mac 02:00:00:00:00:02", "eth0@2q2: queue_map_min 2", "eth0@2q2: queue_map_max 2",
		"pgctrl: reset",
	}
	if diff := cmp.Diff(want, f.log); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
	if sum.Packets != 1001 || len(sum.Threads) != 2 {
		t.Fatalf("summary %+v", sum)
	}
	for i, w := range []struct {
		entry   string
		queue   int
		packets uint64
		src     string
	}{{"eth0@2q0", 0, 501, "198.18.1.1"}, {"eth0@2q2", 2, 500, "198.18.1.2"}} {
		th := sum.Threads[i]
		if th.CPU != 2 || th.Entry != w.entry || th.Queue == nil || *th.Queue != w.queue || th.Packets != w.packets || th.Src != w.src {
			t.Errorf("device %d: %+v (queue %v), want cpu 2 %s queue %d %d packets from %s", i, th, th.Queue, w.entry, w.queue, w.packets, w.src)
		}
	}
	// The fake starts a thread's second device 100µs after its first.
	if a, b := sum.Threads[0].FirstFrameNs, sum.Threads[1].FirstFrameNs; a == 0 || b-a != 100_000 {
		t.Errorf("first frames %d and %d: want each device's own started, 100µs apart", a, b)
	}
}

func TestKernelReset(t *testing.T) {
	f := newFakePktgen(2, "eth0")
	if err := f.Write("kpktgend_0", "add_device eth0@0"); err != nil {
		t.Fatal(err)
	}
	if err := kernelOn(f).Reset(); err != nil || len(f.devs) != 0 {
		t.Fatalf("reset: %v, %d devices left", err, len(f.devs))
	}
	if err := (&Kernel{Proc: DirProc{Dir: t.TempDir() + "/none"}}).Reset(); !errors.Is(err, ErrNoPktgen) {
		t.Errorf("reset without pktgen: %v", err)
	}
}

// Every device is configured before the instant and pktgen's start is
// written at it; each thread's first frame is its "started:" moved onto
// the wall clock with the host's offset (an unreadable offset leaves it
// unknown, with a warning).
func TestKernelRunAtInstant(t *testing.T) {
	f := newFakePktgen(2, "eth0")
	cfg := baseConfig()
	cfg.StartAt = time.Now().Add(30 * time.Millisecond).Round(0)
	k := kernelOn(f)
	// The fake prints started as realtime µs mod 1e12: this offset undoes
	// the modulus, so the first frame is the fake's start in Unix ns.
	base := time.Now().UnixMicro() / 1e12 * 1e12 * 1000
	k.MonoOffset = func() (int64, error) { return base, nil }
	sum, err := k.Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	at := uint64(cfg.StartAt.Truncate(time.Microsecond).UnixNano())
	for i, th := range sum.Threads {
		if th.FirstFrameNs < at || th.FirstFrameNs > at+uint64(time.Second) {
			t.Errorf("thread %d: first frame %d, want at or just after the instant %d", i, th.FirstFrameNs, at)
		}
	}
	f = newFakePktgen(2, "eth0")
	k = kernelOn(f)
	k.MonoOffset = func() (int64, error) { return 0, os.ErrPermission }
	sum, err = k.Run(context.Background(), baseConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Threads[0].FirstFrameNs != 0 || len(sum.Warnings) == 0 || !strings.Contains(sum.Warnings[0], "no first-frame times") {
		t.Errorf("offset unreadable: first frame %d, warnings %q", sum.Threads[0].FirstFrameNs, sum.Warnings)
	}
}

// A run cancelled before its instant never writes start: it ends at
// once, interrupted, with pktgen reset.
func TestKernelRunCancelledBeforeInstant(t *testing.T) {
	f := newFakePktgen(2, "eth0")
	cfg := baseConfig()
	cfg.StartAt = time.Now().Add(time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	sum, err := kernelOn(f).Run(ctx, cfg, nil)
	if err != nil || !sum.Interrupted || sum.Packets != 0 || time.Since(t0) > 10*time.Second {
		t.Fatalf("%+v %v after %s, want interrupted at once", sum, err, time.Since(t0))
	}
	if started := f.stop != nil; started || f.resets != 2 {
		t.Errorf("started %v, resets %d; want no start, reset before and after", started, f.resets)
	}
}
