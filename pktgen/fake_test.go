package pktgen

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// fakePktgen simulates /proc/net/pktgen as kernel 6.1 behaves (ENOTSUPP
// for burst/clone_skb on veth, "successful" writes of unknown flags), so
// the driver's logic can be tested without the module. The real thing is
// tested in the qemu guest (cmd/linerate/internal/vmtest).
type fakePktgen struct {
	mu      sync.Mutex
	cpus    int
	ifaces  map[string]bool // name → up
	devs    map[string]*fakeDev
	thread  map[int]string // last thread Result per cpu
	stop    chan struct{}
	log     []string // every write, "file: cmd"
	busyFor int      // add_device returns EBUSY this many times
	modern  bool     // knows NODE (else only NODE_ALLOC)
	resets  int
	// lostStops makes the next stops have no effect, as when a stop
	// reaches a kthread in the same wake-up as the start's T_RUN.
	lostStops int
	// lateRemovals makes a thread do its rem_device_all late, as a
	// kpktgend thread that did not wake within the 125 ms the kernel's
	// write waits (a loaded guest): the devices added after it are
	// removed at the next write to one of them, this many times.
	lateRemovals int
	pending      map[int]bool // cpu → a rem_device_all not done yet
	// lateRun makes start return before the threads run, as the
	// kernel's does when a kpktgend thread has not picked up its T_RUN
	// within the 125 ms the write waits: the devices start this much
	// later and the run goes on without the writer.
	lateRun time.Duration
}

type fakeDev struct {
	cpu     int
	params  map[string]string
	flags   []string
	count   uint64
	sofar   uint64
	result  string
	running bool
	started time.Time
}

func newFakePktgen(cpus int, ifaces ...string) *fakePktgen {
	f := &fakePktgen{cpus: cpus, ifaces: map[string]bool{}, devs: map[string]*fakeDev{}, thread: map[int]string{}, modern: true}
	for _, i := range ifaces {
		f.ifaces[i] = true
	}
	return f
}

func (f *fakePktgen) Write(name, cmd string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, name+": "+cmd)
	cmd = strings.TrimSuffix(cmd, "\n")
	key, val, _ := strings.Cut(cmd, " ")
	switch {
	case name == "pgctrl":
		switch cmd {
		case "reset":
			f.resets++
			f.devs = map[string]*fakeDev{}
		case "stop":
			if f.lostStops > 0 {
				f.lostStops--
				return nil
			}
			if f.stop != nil {
				close(f.stop)
				f.stop = nil
			}
		default:
			return syscall.EINVAL
		}
		return nil
	case strings.HasPrefix(name, "kpktgend_"):
		cpu, _ := strconv.Atoi(strings.TrimPrefix(name, "kpktgend_"))
		if cpu >= f.cpus {
			return fs.ErrNotExist
		}
		switch key {
		case "rem_device_all":
			for n, d := range f.devs {
				if d.cpu == cpu {
					delete(f.devs, n)
				}
			}
			if f.lateRemovals > 0 {
				f.lateRemovals--
				if f.pending == nil {
					f.pending = map[int]bool{}
				}
				f.pending[cpu] = true
			}
			f.thread[cpu] = "OK: rem_device_all"
		case "add_device":
			dev, _, _ := strings.Cut(val, "@")
			up, ok := f.ifaces[dev]
			switch {
			case !ok:
				f.thread[cpu] = "ERROR: can not add device " + val
				return syscall.ENODEV
			case !up:
				return syscall.ENETDOWN
			case f.devs[val] != nil:
				return syscall.EBUSY
			case f.busyFor > 0:
				f.busyFor--
				return syscall.EBUSY
			}
			f.devs[val] = &fakeDev{cpu: cpu, params: map[string]string{}, count: 1000, result: "Idle"}
			f.thread[cpu] = "OK: add_device=" + val
		default:
			return syscall.EINVAL
		}
		return nil
	}
	if d := f.devs[name]; d != nil && f.pending[d.cpu] {
		// The thread wakes and does the rem_device_all it was asked
		// for before this device was added.
		delete(f.pending, d.cpu)
		for n, o := range f.devs {
			if o.cpu == d.cpu {
				delete(f.devs, n)
			}
		}
	}
	d := f.devs[name]
	if d == nil {
		return fs.ErrNotExist
	}
	veth := strings.HasPrefix(name, "veth")
	switch key {
	case "count":
		n, err := strconv.ParseUint(val, 10, 64)
		if err != nil {
			return syscall.EINVAL
		}
		d.count = n
	case "burst":
		if n, _ := strconv.Atoi(val); n > 1 && veth {
			return syscall.Errno(524)
		}
	case "clone_skb":
		if n, _ := strconv.Atoi(val); n > 0 && veth {
			return syscall.Errno(524)
		}
	case "dst_mac", "src_mac":
		if _, err := net.ParseMAC(val); err != nil {
			return syscall.EINVAL
		}
		d.params[key] = val
		d.result = "OK: " + strings.TrimSuffix(key, "_mac") + "mac " + val
		return nil
	case "flag":
		name := strings.TrimPrefix(val, "!")
		known := strings.Contains(" IPSRC_RND UDPSRC_RND UDPCSUM NO_TIMESTAMP QUEUE_MAP_CPU SHARED ", " "+name+" ") ||
			(name == "NODE") == f.modern && (name == "NODE" || name == "NODE_ALLOC")
		if !known {
			d.result = "Flag -:" + val + ":- unknown\nAvailable flags, (prepend ! to un-set flag):\n  IPSRC_RND, ..."
			return nil
		}
		d.flags = append(d.flags, val)
		d.result = "OK: flags=0x1"
		return nil
	case "tos":
		if len(val) != 2 {
			d.result = "ERROR: tos must be 00-ff"
			return nil
		}
	case "pkt_size", "min_pkt_size", "max_pkt_size", "delay", "ratep", "rate", "dst_min", "dst_max", "src_min", "src_max",
		"dst6", "src6", "udp_src_min", "udp_src_max", "udp_dst_min", "udp_dst_max", "queue_map_min", "queue_map_max",
		"node", "xmit_mode", "vlan_id", "vlan_p", "vlan_cfi", "flows", "flowlen", "frags":
	case "imix_weights":
		d.params[key] = val
		return nil // leaves Result untouched
	default:
		d.result = fmt.Sprintf("No such parameter \"%s\"", key)
		return syscall.EINVAL
	}
	d.params[key] = val
	d.result = "OK: " + key + "=" + val
	return nil
}

func (f *fakePktgen) Read(name string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case name == "pgctrl":
		return []byte("Packet Generator for packet performance testing. Version: 2.75\n"), nil
	case strings.HasPrefix(name, "kpktgend_"):
		cpu, _ := strconv.Atoi(strings.TrimPrefix(name, "kpktgend_"))
		if cpu >= f.cpus {
			return nil, fs.ErrNotExist
		}
		var run []string
		for n, d := range f.devs {
			if d.cpu == cpu {
				run = append(run, n)
			}
		}
		res := f.thread[cpu]
		if res == "" {
			res = "NA"
		}
		return []byte(fmt.Sprintf("Running: %s\nStopped: \nResult: %s\n", strings.Join(run, " "), res)), nil
	}
	d := f.devs[name]
	if d == nil {
		return nil, fs.ErrNotExist
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Params: count %d  min_pkt_size: %s  max_pkt_size: %s\n", d.count, d.params["pkt_size"], d.params["pkt_size"])
	fmt.Fprintf(&b, "     frags: 0  delay: %s  clone_skb: 0  ifname: %s\n", d.params["delay"], name)
	fmt.Fprintf(&b, "     dst_min: %s  dst_max: %s\n", d.params["dst_min"], d.params["dst_max"])
	fmt.Fprintf(&b, "     src_min: %s  src_max: %s\n", d.params["src_min"], d.params["src_max"])
	fmt.Fprintf(&b, "     queue_map_min: %s  queue_map_max: %s\n", d.params["queue_map_min"], d.params["queue_map_max"])
	fmt.Fprintf(&b, "     Flags: %s  \n", strings.Join(d.flags, "  "))
	fmt.Fprintf(&b, "Current:\n     pkts-sofar: %d  errors: 0\n", d.sofar)
	startUS := uint64(d.started.UnixMicro() % 1e12)
	fmt.Fprintf(&b, "     started: %dus  stopped: %dus idle: 0us\n", startUS, startUS+d.elapsedUS())
	fmt.Fprintf(&b, "     seq_num: %d  cur_dst_mac_offset: 0  cur_src_mac_offset: 0\n", d.sofar+1)
	fmt.Fprintf(&b, "Result: %s\n", d.result)
	return []byte(b.String()), nil
}

func (d *fakeDev) elapsedUS() uint64 {
	if d.count > 0 && !d.running {
		return d.sofar / 10 // a fake 10 Mpps
	}
	return uint64(time.Since(d.started).Microseconds()) + 1
}

// Start "sends": counted devices finish at once, count 0 runs until stop;
// with lateRun it returns at once and the run happens later.
func (f *fakePktgen) Start(at time.Time) error {
	if err := WaitUntil(context.Background(), at); err != nil {
		return err
	}
	if f.lateRun > 0 {
		go func() {
			time.Sleep(f.lateRun)
			_ = f.run()
		}()
		return nil
	}
	return f.run()
}

// run is one run of every device, as the kernel's threads do it.
func (f *fakePktgen) run() error {
	f.mu.Lock()
	stop := make(chan struct{})
	f.stop = stop
	forever := false
	// The kernel starts a thread's devices one after the other
	// (pktgen_run's loop sets each one's started_at): the k-th device of
	// a thread, by name, starts k*100µs after the first.
	now, nth := time.Now(), map[int]int{}
	for _, name := range slices.Sorted(maps.Keys(f.devs)) {
		d := f.devs[name]
		d.started, d.running, d.sofar = now.Add(time.Duration(nth[d.cpu])*100*time.Microsecond), true, 0
		nth[d.cpu]++
		d.result = "Starting"
		if d.count == 0 {
			forever = true
		}
	}
	f.mu.Unlock()
	if forever {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
	loop:
		for {
			select {
			case <-stop:
				break loop
			case <-tick.C:
				f.mu.Lock()
				for _, d := range f.devs {
					d.sofar += 1000
				}
				f.mu.Unlock()
			}
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, d := range f.devs {
		if d.count > 0 {
			d.sofar = d.count
		}
		us := d.elapsedUS()
		d.running = false
		size, _ := strconv.Atoi(d.params["pkt_size"])
		pps := d.sofar * 1e6 / max(us, 1)
		// A paced device waits about half of each gap (delay, ns) after
		// it stamps a frame: its idle time.
		delay, _ := strconv.ParseUint(d.params["delay"], 10, 64)
		idle := d.sofar * delay / 2000
		d.result = fmt.Sprintf("OK: %d(c%d+d%d) usec, %d (%dbyte,0frags)\n  %dpps %dMb/sec (%dbps) errors: 0",
			us, us-min(idle, us), idle, d.sofar, size, pps, pps*uint64(size)*8/1e6, pps*uint64(size)*8)
	}
	if f.stop == stop {
		f.stop = nil
	}
	return nil
}

func (f *fakePktgen) wrote(s string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, l := range f.log {
		if l == s {
			return true
		}
	}
	return false
}

func parseMAC(s string) (net.HardwareAddr, error) { return net.ParseMAC(s) }
