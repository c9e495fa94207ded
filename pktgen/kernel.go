package pktgen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/linerate/linerate/internal/ctxsleep"
)

// Kernel drives the kernel's pktgen through a Proc.
type Kernel struct {
	Proc Proc
	Log  hclog.Logger
	// PollInterval is how often a run samples every device's counters
	// for live progress (default 200 ms).
	PollInterval time.Duration
	// Sleep waits between retries (tests replace it).
	Sleep func(ctx context.Context, d time.Duration) error
	// MonoOffset is CLOCK_REALTIME minus CLOCK_MONOTONIC in ns, which
	// moves pktgen's per-thread start onto the wall clock (default: the
	// host's, MonoOffset; tests replace it).
	MonoOffset func() (int64, error)
}

// NewKernel returns a kernel backend on DefaultProcDir.
func NewKernel(log hclog.Logger) *Kernel {
	return &Kernel{Proc: DirProc{Dir: DefaultProcDir}, Log: log}
}

func (k *Kernel) defaults() {
	if k.Log == nil {
		k.Log = hclog.NewNullLogger()
	}
	if k.PollInterval <= 0 {
		k.PollInterval = 200 * time.Millisecond
	}
	if k.MonoOffset == nil {
		k.MonoOffset = MonoOffset
	}
	if k.Sleep == nil {
		k.Sleep = ctxsleep.Sleep
	}
}

// Available reports whether pktgen is loaded, and its version line.
func (k *Kernel) Available() (string, error) {
	b, err := k.Proc.Read("pgctrl")
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w: %s/pgctrl does not exist: load the module with `modprobe pktgen` (CONFIG_NET_PKTGEN)", ErrNoPktgen, DefaultProcDir)
	}
	if err != nil {
		return "", fmt.Errorf("read pktgen pgctrl: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// Reset stops every pktgen thread and detaches every device: what Run
// does on every exit, for use after a run that was killed outright.
func (k *Kernel) Reset() error {
	k.defaults()
	if _, err := k.Available(); err != nil {
		return err
	}
	if err := k.ctl("reset"); err != nil {
		return fmt.Errorf("reset pktgen: %w", err)
	}
	return nil
}

// Progress is a live sample of a run.
type Progress struct {
	Elapsed time.Duration
	Packets uint64
	Errors  uint64
	Threads []ThreadProgress
}

// ThreadProgress is one thread's counters so far (one stream: a pktgen
// device entry).
type ThreadProgress struct {
	CPU     int
	Entry   string // the pktgen device entry ("eth0@2q0"); "" from a userspace backend
	Packets uint64
	Errors  uint64
}

// ctl writes a pgctrl command.
func (k *Kernel) ctl(cmd string) error {
	if err := k.Proc.Write("pgctrl", cmd); err != nil {
		ce := &CommandError{File: "pgctrl", Cmd: cmd, Err: err, kind: classifyErrno(err)}
		return ce
	}
	return nil
}

// readDevice parses a device entry's file.
func (k *Kernel) readDevice(entry string) (*DeviceFile, error) {
	b, err := k.Proc.Read(entry)
	if err != nil {
		return nil, fmt.Errorf("read pktgen %s: %w", entry, err)
	}
	return ParseDeviceFile(entry, bytes.NewReader(b))
}

// resultText reads the Result text of a device or thread file ("" when unreadable).
func (k *Kernel) resultText(file string) string {
	b, err := k.Proc.Read(file)
	if err != nil {
		return ""
	}
	_, after, ok := strings.Cut(string(b), "Result:")
	if !ok {
		return ""
	}
	return strings.TrimSpace(after)
}

// set writes one command to a file and requires its Result to say OK:
// many refused settings are "successful" writes (unknown flag or
// xmit_mode, node not possible, vlan or tos out of range).
func (k *Kernel) set(file, cmd string, checkResult bool) error {
	werr := k.Proc.Write(file, cmd)
	res := k.resultText(file)
	if werr != nil {
		if strings.HasPrefix(res, "OK") {
			res = "" // the ack of an earlier command, not about this one
		}
		kind := classifyErrno(werr)
		if kind == nil {
			kind = ErrRefused
		}
		return &CommandError{File: file, Cmd: cmd, Err: werr, Result: res, kind: kind}
	}
	if checkResult && !strings.HasPrefix(res, "OK") {
		return &CommandError{File: file, Cmd: cmd, Result: res, kind: ErrRefused}
	}
	return nil
}

// thread is the file of the pktgen thread of cpu, if pktgen has one.
func (k *Kernel) thread(cpu int) (string, error) {
	thread := fmt.Sprintf("kpktgend_%d", cpu)
	if _, err := k.Proc.Read(thread); err != nil {
		return "", fmt.Errorf("pktgen has no thread for cpu %d (%s): the CPU is offline or came online after pktgen loaded: %w", cpu, thread, err)
	}
	return thread, nil
}

// clearThread detaches every device from the pktgen thread of cpu.
func (k *Kernel) clearThread(cpu int) error {
	thread, err := k.thread(cpu)
	if err != nil {
		return err
	}
	return k.set(thread, "rem_device_all", false)
}

// addDevice puts entry on thread cpu, retrying EBUSY, which follows a
// rem_device_all or reset that the thread has not processed yet. A
// thread takes several entries (one per addDevice), each its own device.
func (k *Kernel) addDevice(ctx context.Context, cpu int, entry string) error {
	thread, err := k.thread(cpu)
	if err != nil {
		return err
	}
	for attempt := 0; attempt < 6; attempt++ {
		if err = k.set(thread, "add_device "+entry, true); !errors.Is(err, ErrBusy) {
			break
		}
		if serr := k.Sleep(ctx, time.Duration(50<<attempt)*time.Millisecond); serr != nil {
			return serr
		}
	}
	dev, _, _ := strings.Cut(entry, "@")
	switch {
	case errors.Is(err, ErrNoDevice):
		return fmt.Errorf("%w (interface %q does not exist in this network namespace)", err, dev)
	case errors.Is(err, ErrDeviceDown):
		return fmt.Errorf("%w (bring it up: ip link set %s up; pktgen also needs carrier, e.g. a veth peer that is up)", err, dev)
	case errors.Is(err, ErrBusy):
		return fmt.Errorf("%w (another pktgen run uses %s)", err, entry)
	}
	return err
}

// lateRemovalTries bounds how often a device that a thread's late
// rem_device_all removed is added and configured again.
const lateRemovalTries = 3

// configureAdded configures device i, added just before: a kpktgend
// thread does a reset or rem_device_all when it next wakes (within
// HZ/10 when idle), and the kernel's write waits only 125 ms for it, so
// on a loaded host one not done yet removes the devices added since —
// the entry's file is gone. Such a device is added and configured again
// (the removal is done by then), up to lateRemovalTries times.
func (k *Kernel) configureAdded(ctx context.Context, cfg *Config, i int, warn func(string)) error {
	entry := cfg.EntryName(i)
	for try := 1; ; try++ {
		err := k.configure(cfg, i, warn)
		if err == nil || !errors.Is(err, fs.ErrNotExist) || try >= lateRemovalTries {
			return err
		}
		k.Log.Named("pktgen").Warn("a pktgen thread removed a device added after its reset: adding it again", "entry", entry, "try", try)
		if err := k.addDevice(ctx, cfg.CPUs[i], entry); err != nil {
			return err
		}
	}
}

// ensureDevices adds and configures again every device that a thread's
// late removal took after it was configured (one removal takes all of
// its thread's devices), so that start starts them all.
func (k *Kernel) ensureDevices(ctx context.Context, cfg *Config, warn func(string)) error {
	for i, cpu := range cfg.CPUs {
		entry := cfg.EntryName(i)
		if _, err := k.Proc.Read(entry); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		k.Log.Named("pktgen").Warn("a pktgen thread removed a configured device: adding it again", "entry", entry)
		if err := k.addDevice(ctx, cpu, entry); err != nil {
			return err
		}
		if err := k.configureAdded(ctx, cfg, i, warn); err != nil {
			return err
		}
	}
	return nil
}

// configure writes thread i's settings, with the fallbacks that probing
// decides: NODE_ALLOC for kernels that predate the NODE name, and burst 1
// / clone_skb 0 when the device refuses skb sharing and cfg allows it.
func (k *Kernel) configure(cfg *Config, i int, warn func(string)) error {
	entry := cfg.EntryName(i)
	for _, cmd := range cfg.Commands(i) {
		// imix_weights leaves Result as it was.
		check := !strings.HasPrefix(cmd, "imix_weights")
		err := k.set(entry, cmd, check)
		if err != nil && cmd == "flag NODE" && strings.Contains(k.resultText(entry), "unknown") {
			err = k.set(entry, "flag NODE_ALLOC", true)
		}
		if err != nil && errors.Is(err, ErrNotSupported) && (strings.HasPrefix(cmd, "burst ") || strings.HasPrefix(cmd, "clone_skb ")) {
			setting, _, _ := strings.Cut(cmd, " ")
			if !cfg.AllowFallback {
				return fmt.Errorf("%w: %s refuses %s (no skb sharing on this device); use %s or allow the fallback", err, cfg.Device, setting,
					map[string]string{"burst": "burst 1", "clone_skb": "clone_skb 0"}[setting])
			}
			if i == 0 {
				warn(fmt.Sprintf("%s refuses %q (no skb sharing): sending with %s", cfg.Device, cmd,
					map[string]string{"burst": "burst 1", "clone_skb": "clone_skb 0"}[setting]))
			}
			if strings.HasPrefix(cmd, "burst ") {
				cfg.Burst = 1
			} else {
				cfg.CloneSkb = 0
			}
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// startThreadLead is how long before the instant the start thread is
// made (its signal mask set and pgctrl opened before it waits).
const startThreadLead = 20 * time.Millisecond

// Run sends with pktgen as cfg says and returns the per-thread results.
// Every device is configured before cfg.StartAt; "start" is written to
// pgctrl at that instant. Each thread's FirstFrameNs is pktgen's own start
// of it (the device file's "started:").
// It resets pktgen before and after (also on every error), so a failed
// run leaves no device on a pktgen thread. Cancelling ctx stops the run
// (with a "stop" write, never a signal to the writer) and returns what
// was sent, marked Interrupted. progress, when not nil, gets live samples.
func (k *Kernel) Run(ctx context.Context, cfg Config, progress func(Progress)) (sum *Summary, err error) {
	k.defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if _, err := k.Available(); err != nil {
		return nil, err
	}
	log := k.Log.Named("pktgen").With("dev", cfg.Device)
	if err := k.ctl("reset"); err != nil {
		return nil, fmt.Errorf("reset pktgen before the run: %w", err)
	}
	defer func() {
		if rerr := k.ctl("reset"); rerr != nil {
			log.Error("reset pktgen after the run", "error", rerr)
			if err == nil {
				err = fmt.Errorf("reset pktgen after the run: %w", rerr)
			}
		}
	}()
	sum = &Summary{Backend: string(BackendKernel), Device: cfg.Device}
	warn := func(s string) { sum.Warnings = append(sum.Warnings, s); log.Warn(s) }
	// Every thread's devices go once it is clear: a thread may carry
	// several (one per queue).
	for _, cpu := range cfg.ThreadCPUs() {
		if err := k.clearThread(cpu); err != nil {
			return nil, err
		}
	}
	for i, cpu := range cfg.CPUs {
		if err := k.addDevice(ctx, cpu, cfg.EntryName(i)); err != nil {
			return nil, err
		}
	}
	for i := range cfg.CPUs {
		if err := k.configureAdded(ctx, &cfg, i, warn); err != nil {
			return nil, err
		}
	}
	if err := k.ensureDevices(ctx, &cfg, warn); err != nil {
		return nil, err
	}

	log.Info("starting", "devices", len(cfg.CPUs), "threads", len(cfg.ThreadCPUs()), "count_per_thread", cfg.Count, "duration", cfg.Duration, "at", cfg.StartAt)
	start := time.Now()
	if cfg.StartAt.After(start) {
		start = cfg.StartAt
	}
	// Cancellable here until shortly before the instant; the start
	// thread waits the rest and writes start at it.
	if !cfg.StartAt.IsZero() {
		if err := WaitUntil(ctx, cfg.StartAt.Add(-startThreadLead)); err != nil {
			sum.Interrupted = true
			return sum, nil
		}
	}
	done := make(chan error, 1)
	go func() { done <- k.Proc.Start(cfg.StartAt) }()
	var deadline <-chan time.Time
	if cfg.Duration > 0 {
		t := time.NewTimer(time.Until(start) + cfg.Duration)
		defer t.Stop()
		deadline = t.C
	}
	tick := time.NewTicker(k.PollInterval)
	defer tick.Stop()
	cancelled := ctx.Done()
	// A stop that reaches a kpktgend thread in the same wake-up as the
	// start's T_RUN is undone by it (the thread handles T_STOP before
	// T_RUN), and a count-0 run would go on for ever: so once stopping,
	// "stop" is repeated until start returns. It is idempotent.
	var resendTicker *time.Ticker
	var resend <-chan time.Time
	defer func() {
		if resendTicker != nil {
			resendTicker.Stop()
		}
	}()
	stop := func(why string) {
		if resendTicker == nil {
			log.Info("stopping", "why", why)
			resendTicker = time.NewTicker(250 * time.Millisecond)
			resend = resendTicker.C
		}
		if err := k.ctl("stop"); err != nil {
			log.Error("stop pktgen", "error", err)
		}
	}
	var startErr error
	// pgctrl's start returns once no thread is running, which is also
	// the case when a kpktgend thread has not yet picked up its T_RUN (it
	// wakes at HZ/10, the write waits 125 ms: a loaded guest misses it).
	// So after it returns the run is over only when every device has its
	// result (running, below); the loop goes on polling until then.
	var returned time.Time
wait:
	for {
		select {
		case startErr = <-done:
			done = nil
			if startErr != nil || !k.running(&cfg, 0) {
				break wait
			}
			returned = time.Now()
		case <-cancelled:
			cancelled = nil
			sum.Interrupted = true
			stop("cancelled")
		case <-deadline:
			deadline = nil
			stop("duration reached")
		case <-resend:
			stop("still running")
		case <-tick.C:
			if progress != nil {
				progress(k.sample(&cfg, max(time.Since(start), 0)))
			}
			if done == nil && !k.running(&cfg, time.Since(returned)) {
				break wait
			}
		}
	}
	if startErr != nil {
		return nil, fmt.Errorf("pktgen start: %w", startErr)
	}
	return sum, k.collect(ctx, &cfg, sum)
}

// lateStartLimit is how long after pgctrl's start returned a device may
// still not have started before the run stops waiting for it (its
// collect then says it has no result): a kpktgend thread picks up its
// T_RUN within a poll, HZ/10, however loaded its CPU.
const lateStartLimit = 5 * time.Second

// running tells whether a device of the run is sending (its result
// "Starting") or, within lateStartLimit of the start's return (since),
// is yet to start (its result still the ack of a setting). A device
// whose file cannot be read is left to collect to report.
func (k *Kernel) running(cfg *Config, since time.Duration) bool {
	for i := range cfg.CPUs {
		df, err := k.readDevice(cfg.EntryName(i))
		if err != nil {
			continue
		}
		switch df.Result.State {
		case StateStarting:
			return true
		case StateIdle:
			if since < lateStartLimit {
				return true
			}
		}
	}
	return false
}

// sample reads every device's live counters.
func (k *Kernel) sample(cfg *Config, elapsed time.Duration) Progress {
	p := Progress{Elapsed: elapsed}
	for i, cpu := range cfg.CPUs {
		df, err := k.readDevice(cfg.EntryName(i))
		if err != nil {
			continue
		}
		p.Threads = append(p.Threads, ThreadProgress{CPU: cpu, Entry: cfg.EntryName(i), Packets: df.Current.PktsSofar, Errors: df.Current.Errors})
		p.Packets += df.Current.PktsSofar
		p.Errors += df.Current.Errors
	}
	return p
}

// collect reads every device's Result once the run has stopped.
func (k *Kernel) collect(ctx context.Context, cfg *Config, sum *Summary) error {
	var first, last uint64
	offset, offErr := k.MonoOffset()
	if offErr != nil {
		sum.Warnings = append(sum.Warnings, fmt.Sprintf("pktgen's thread starts not moved onto the wall clock (%v): no first-frame times", offErr))
	}
	for i, cpu := range cfg.CPUs {
		entry := cfg.EntryName(i)
		var df *DeviceFile
		var err error
		// The Result is written as each thread stops; give stragglers a moment.
		for try := 0; ; try++ {
			df, err = k.readDevice(entry)
			if err != nil || df.Result.State == StateOK || try >= 20 {
				break
			}
			if serr := k.Sleep(ctx, 50*time.Millisecond); serr != nil {
				break
			}
		}
		if err != nil {
			return fmt.Errorf("collect %s: %w", entry, err)
		}
		if df.Result.State != StateOK {
			return fmt.Errorf("collect %s: no run result (Result: %s): %w", entry, df.Result.Text, ErrRefused)
		}
		t := ThreadSummary{CPU: cpu, Entry: entry, Packets: df.Result.Packets, Errors: df.Result.Errors, USec: df.Result.USec, PacingWaitUSec: df.PacingWaitUSec()}
		t.PPS = rate(t.Packets, t.USec)
		if offErr == nil && t.Packets > 0 {
			t.FirstFrameNs = RealtimeOf(df.Current.StartedUS, offset)
		}
		if cfg.SrcPerThread {
			t.Src = cfg.ThreadSource(i).String()
		}
		if q, ok := cfg.QueueOf(i); ok {
			t.Queue = &q
		}
		sum.Threads = append(sum.Threads, t)
		if c := df.Current; c.StoppedUS > c.StartedUS {
			if first == 0 || c.StartedUS < first {
				first = c.StartedUS
			}
			last = max(last, c.StoppedUS)
		}
		sum.USec = max(sum.USec, t.USec)
	}
	if last > first && first > 0 {
		sum.USec = last - first
	}
	sum.finish(cfg.FrameBytes())
	return nil
}
