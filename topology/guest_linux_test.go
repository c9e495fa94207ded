//go:build linux && traffic

package topology

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"

	"github.com/linerate/linerate/topology/cpuset"
	"github.com/linerate/linerate/topology/irqname"
)

// Tests named TestGuest* run inside a throwaway qemu guest booted by
// cmd/linerate/internal/vmtest (see cmd/linerate/internal/vmtest/topology_test.go), where they may
// change real IRQ affinities. The host test says what the guest looks like:
//
//	LINERATE_VMTEST_GUEST=1        run at all
//	LINERATE_VMTEST_WANT_NODE      NUMA node of the virtio NIC's PCI function
//	LINERATE_VMTEST_WANT_CPUS      that node's CPUs ("2-3")
//	LINERATE_VMTEST_WANT_QUEUES    combined queues of the NIC

func guestOnly(t *testing.T) {
	t.Helper()
	if os.Getenv("LINERATE_VMTEST_GUEST") != "1" {
		t.Skip("runs only inside a vmtest guest (LINERATE_VMTEST_GUEST=1): it changes real IRQ affinities")
	}
}

func guestEnv(t *testing.T, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		t.Fatalf("%s is not set: the host-side vmtest test sets it", name)
	}
	return v
}

// guestVirtioIface is the only interface whose driver is virtio_net.
func guestVirtioIface(t *testing.T) string {
	t.Helper()
	ents, err := os.ReadDir("/sys/class/net")
	if err != nil {
		t.Fatalf("list interfaces: %v", err)
	}
	var found []string
	for _, e := range ents {
		drv, err := os.Readlink("/sys/class/net/" + e.Name() + "/device/driver")
		if err == nil && path.Base(drv) == "virtio_net" {
			found = append(found, e.Name())
		}
	}
	if len(found) != 1 {
		t.Fatalf("want exactly one virtio_net interface, found %v", found)
	}
	return found[0]
}

// guestLinkUp sets IFF_UP on iface after disabling IPv6 on it, so that
// the guest sends nothing (no address, no DAD, no router solicitation).
func guestLinkUp(t *testing.T, iface string) {
	t.Helper()
	err := os.WriteFile("/proc/sys/net/ipv6/conf/"+iface+"/disable_ipv6", []byte("1\n"), 0)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("disable IPv6 on %s: %v", iface, err)
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("bring %s up: socket: %v", iface, err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq(iface)
	if err != nil {
		t.Fatalf("bring %s up: %v", iface, err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		t.Fatalf("bring %s up: SIOCGIFFLAGS: %v", iface, err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		t.Fatalf("bring %s up: SIOCSIFFLAGS: %v", iface, err)
	}
}

func readAffinityList(t *testing.T, irq int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/irq/%d/smp_affinity_list", irq))
	if err != nil {
		t.Fatalf("read affinity of irq %d: %v", irq, err)
	}
	return strings.TrimSpace(string(b))
}

// TestGuestVirtioNUMA inspects a multiqueue virtio NIC behind a PCI
// expander bridge on NUMA node 1, pins its queue IRQs to that node's CPUs
// for real, and restores the originals.
func TestGuestVirtioNUMA(t *testing.T) {
	guestOnly(t)
	wantNode, err := strconv.Atoi(guestEnv(t, "LINERATE_VMTEST_WANT_NODE"))
	if err != nil {
		t.Fatalf("LINERATE_VMTEST_WANT_NODE: %v", err)
	}
	wantCPUs, err := cpuset.ParseList(guestEnv(t, "LINERATE_VMTEST_WANT_CPUS"), 0)
	if err != nil {
		t.Fatalf("LINERATE_VMTEST_WANT_CPUS: %v", err)
	}
	wantQueues, err := strconv.Atoi(guestEnv(t, "LINERATE_VMTEST_WANT_QUEUES"))
	if err != nil {
		t.Fatalf("LINERATE_VMTEST_WANT_QUEUES: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	log := hclog.New(&hclog.LoggerOptions{Name: "guest", Output: t.Output(), Level: hclog.Debug})

	iface := guestVirtioIface(t)
	guestLinkUp(t, iface)
	r, err := OpenRoot("/")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	n, err := Inspect(r, iface)
	if err != nil {
		t.Fatalf("inspect %s: %v", iface, err)
	}
	t.Logf("%s: driver %s virtio %s pci %s devpath %s node %d local %s online %s queues rx %d tx %d, %d vectors, skipped %+v, warnings %q",
		n.Iface, n.Driver, n.VirtioDev, n.PCI, n.DevPath, n.NUMANode, n.LocalCPUs, n.OnlineCPUs, n.RxQueues, n.TxQueues, len(n.Vectors), n.Skipped, n.Warnings)
	if n.Driver != "virtio_net" || !strings.HasPrefix(n.VirtioDev, "virtio") || n.PCI == "" {
		t.Errorf("driver %q virtio device %q pci %q: want virtio_net, virtioN and the PCI parent", n.Driver, n.VirtioDev, n.PCI)
	}
	if n.NUMANode != wantNode {
		t.Errorf("NUMA node %d, want %d (from the PCI parent %s)", n.NUMANode, wantNode, n.DevPath)
	}
	if !n.LocalCPUs.Equal(wantCPUs) {
		t.Errorf("local CPUs %s, want %s", n.LocalCPUs, wantCPUs)
	}
	if n.IRQSource != "msi_irqs" {
		t.Errorf("IRQ source %q, want msi_irqs", n.IRQSource)
	}
	if n.RxQueues != wantQueues || n.TxQueues != wantQueues {
		t.Errorf("queues rx %d tx %d, want %d each", n.RxQueues, n.TxQueues, wantQueues)
	}
	byName := map[string]Vector{}
	for _, v := range n.Vectors {
		byName[v.Name] = v
	}
	for q := 0; q < wantQueues; q++ {
		for _, want := range []struct {
			name string
			dir  irqname.Dir
		}{{fmt.Sprintf("%s-input.%d", n.VirtioDev, q), irqname.Rx}, {fmt.Sprintf("%s-output.%d", n.VirtioDev, q), irqname.Tx}} {
			v, ok := byName[want.name]
			switch {
			case !ok:
				t.Errorf("no queue vector %s", want.name)
			case v.Queue != q || v.Dir != want.dir || v.Managed:
				t.Errorf("vector %s: queue %d dir %s managed %v, want queue %d dir %s not managed", want.name, v.Queue, v.Dir, v.Managed, q, want.dir)
			}
		}
	}
	if len(n.Vectors) != 2*wantQueues {
		t.Errorf("%d queue vectors, want %d: %+v", len(n.Vectors), 2*wantQueues, n.Vectors)
	}
	if t.Failed() {
		t.FailNow()
	}
	original := map[int]string{}
	for _, v := range n.Vectors {
		original[v.IRQ] = readAffinityList(t, v.IRQ)
		if original[v.IRQ] != v.Current {
			t.Errorf("irq %d (%s): Inspect says current %q, the file says %q", v.IRQ, v.Name, v.Current, original[v.IRQ])
		}
	}

	p, err := MakePlan(n, PlanOptions{})
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	if len(p.Assignments) != len(n.Vectors) {
		t.Fatalf("plan has %d assignments for %d vectors", len(p.Assignments), len(n.Vectors))
	}
	queueCPU := map[int]int{}
	for _, a := range p.Assignments {
		if !wantCPUs.Contains(a.CPU) {
			t.Errorf("irq %d (%s) planned on cpu %d, outside node %d's CPUs %s", a.IRQ, a.Name, a.CPU, wantNode, wantCPUs)
		}
		if c, ok := queueCPU[a.Queue]; ok && c != a.CPU {
			t.Errorf("queue %d split over cpus %d and %d", a.Queue, c, a.CPU)
		}
		queueCPU[a.Queue] = a.CPU
	}

	stateDir := t.TempDir()
	res, err := Apply(ctx, r, p, ApplyOptions{StateDir: stateDir, IRQBalance: IRQBalanceIgnore, RootName: "/", Logger: log})
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	t.Logf("apply: %+v", res)
	for _, a := range p.Assignments {
		if got := readAffinityList(t, a.IRQ); got != strconv.Itoa(a.CPU) {
			t.Errorf("after apply irq %d (%s): smp_affinity_list %q, planned cpu %d", a.IRQ, a.Name, got, a.CPU)
		}
	}
	for _, ch := range res.Changes {
		if ch.Status != StatusApplied && ch.Status != StatusUnchanged {
			t.Errorf("apply irq %d (%s): status %s (%s)", ch.IRQ, ch.Name, ch.Status, ch.Note)
		}
		if ch.Status == StatusUnchanged && original[ch.IRQ] != ch.To {
			t.Errorf("apply irq %d (%s): unchanged, but it was %q and is planned on %s", ch.IRQ, ch.Name, original[ch.IRQ], ch.To)
		}
	}
	if _, err := os.Stat(JournalPath(stateDir, iface)); err != nil {
		t.Errorf("journal after apply: %v", err)
	}
	for _, a := range p.Assignments {
		eff, _ := os.ReadFile(fmt.Sprintf("/proc/irq/%d/effective_affinity_list", a.IRQ))
		t.Logf("irq %d (%s): planned %d, effective %s", a.IRQ, a.Name, a.CPU, strings.TrimSpace(string(eff)))
	}

	guestVerify(t, ctx, r, n, stateDir, p)

	rres, err := Restore(ctx, r, RestoreOptions{StateDir: stateDir, Iface: iface, RootName: "/", Logger: log})
	if err != nil {
		t.Fatalf("restore: %v", err)
	}
	t.Logf("restore: %+v", rres)
	for irq, want := range original {
		if got := readAffinityList(t, irq); got != want {
			t.Errorf("after restore irq %d: smp_affinity_list %q, original %q", irq, got, want)
		}
	}
	if _, err := os.Stat(JournalPath(stateDir, iface)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("journal still there after restore: %v", err)
	}

	again, err := Restore(ctx, r, RestoreOptions{StateDir: stateDir, Iface: iface, RootName: "/", Logger: log})
	if err != nil || len(again) != 0 {
		t.Errorf("second restore: %+v, %v; want nothing to do", again, err)
	}
	for irq, want := range original {
		if got := readAffinityList(t, irq); got != want {
			t.Errorf("after second restore irq %d: smp_affinity_list %q, original %q", irq, got, want)
		}
	}
}

// guestVerify sends frames out of n's interface from every online CPU
// between two reads of the real /proc/interrupts: the NIC's queue IRQs
// (the tx completions) fire, and Verify finds each on the CPU the applied
// plan p pinned it to (an IRQ whose move was still pending firing once
// on its old CPU, as x86 moves it, noted).
func guestVerify(t *testing.T, ctx context.Context, r Root, n *NIC, stateDir string, p *Plan) {
	t.Helper()
	j, err := LoadJournal(stateDir, n.Iface)
	if err != nil || j == nil {
		t.Fatalf("journal of %s: %v %v", n.Iface, j, err)
	}
	// Read as the agent reads it when a send starts: after the tuning,
	// effective affinities (some not yet moved) included.
	n, err = Inspect(r, n.Iface)
	if err != nil {
		t.Fatalf("inspect %s after apply: %v", n.Iface, err)
	}
	res, err := Verify(ctx, r, n, j, func(context.Context) error { return guestSendFrames(n.Iface, n.OnlineCPUs.CPUs(), 2000) })
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	var tb strings.Builder
	_ = res.WriteTable(&tb)
	t.Logf("verify:\n%s", tb.String())
	planned := map[int]int{}
	for _, a := range p.Assignments {
		planned[a.IRQ] = a.CPU
	}
	var total uint64
	for _, q := range res.IRQs {
		total += q.Total
		if q.Source != "journal" || q.Planned != strconv.Itoa(planned[q.IRQ]) {
			t.Errorf("irq %d (%s): planned %s from %s, want %d from the journal", q.IRQ, q.Name, q.Planned, q.Source, planned[q.IRQ])
		}
		if q.Note != "" && !strings.Contains(q.Note, "before the move to") {
			t.Errorf("irq %d (%s): %s", q.IRQ, q.Name, q.Note)
		}
	}
	if len(res.IRQs) != len(n.Vectors) || total == 0 {
		t.Errorf("verify saw %d IRQs fire %d times, want the NIC's %d queue IRQs and some interrupts from the frames sent", len(res.IRQs), total, len(n.Vectors))
	}
	if res.OffCPU != 0 {
		t.Errorf("%d queue IRQs fired off the CPUs they were pinned to", res.OffCPU)
	}
}

// guestSendFrames sends count frames out of iface from each of cpus (a
// packet socket on a thread bound to the CPU, so that the kernel picks
// that CPU's transmit queue): broadcast, of the local experimental
// EtherType 0x88b5, into the host's tap and nowhere else.
func guestSendFrames(iface string, cpus []int, count int) error {
	ifi, err := net.InterfaceByName(iface)
	if err != nil {
		return fmt.Errorf("send frames: %w", err)
	}
	frame := make([]byte, 60)
	copy(frame, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	copy(frame[6:], ifi.HardwareAddr)
	frame[12], frame[13] = 0x88, 0xb5
	to := &unix.SockaddrLinklayer{Ifindex: ifi.Index, Protocol: htons(0x88b5), Halen: 6, Addr: [8]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}}
	for _, cpu := range cpus {
		errc := make(chan error, 1)
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread() // the thread's affinity is reset with it
			var set unix.CPUSet
			set.Set(cpu)
			if err := unix.SchedSetaffinity(0, &set); err != nil {
				errc <- fmt.Errorf("send frames: bind to cpu %d: %w", cpu, err)
				return
			}
			fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				errc <- fmt.Errorf("send frames: packet socket: %w", err)
				return
			}
			defer unix.Close(fd)
			for i := 0; i < count; i++ {
				if err := unix.Sendto(fd, frame, 0, to); err != nil && !errors.Is(err, unix.ENOBUFS) {
					errc <- fmt.Errorf("send frames on %s from cpu %d: %w", iface, cpu, err)
					return
				}
			}
			errc <- nil
		}()
		if err := <-errc; err != nil {
			return err
		}
	}
	return nil
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// TestGuestSnapshotReplay snapshots what planning the virtio NIC reads
// from the real sysfs and procfs, and replays it: the same plan.
func TestGuestSnapshotReplay(t *testing.T) {
	guestOnly(t)
	iface := guestVirtioIface(t)
	guestLinkUp(t, iface)
	live, err := OpenRoot("/")
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	planJSON := func(r Root) string {
		t.Helper()
		n, err := Inspect(r, iface)
		if err != nil {
			t.Fatalf("inspect %s: %v", iface, err)
		}
		p, err := MakePlan(n, PlanOptions{})
		if err != nil {
			t.Fatalf("plan %s: %v", iface, err)
		}
		b, err := json.MarshalIndent(PlanReport(p), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	rec := NewRecorder(live)
	want := planJSON(rec)
	var buf bytes.Buffer
	if err := rec.WriteTarGz(&buf); err != nil {
		t.Fatalf("write snapshot: %v", err)
	}
	dir := t.TempDir()
	if err := ExtractTarGz(bytes.NewReader(buf.Bytes()), dir); err != nil {
		t.Fatalf("extract snapshot: %v", err)
	}
	replay, err := OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer replay.Close()
	if got := planJSON(replay); got != want {
		t.Errorf("plan from the snapshot differs from the live one:\nlive:\n%s\nreplayed:\n%s", want, got)
	}
	t.Logf("snapshot: %d bytes; plan:\n%s", buf.Len(), want)
}
