package agent

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/linerate/linerate/internal/ctxsleep"
	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/pktgen/choose"
	"github.com/linerate/linerate/topology"
)

// destinationSettle is how long Configure waits for gossip to bring the
// receiver a destination belongs to before it refuses the destination.
const destinationSettle = 3 * time.Second

// configurer completes and checks a send's configuration: defaults from
// the agent's interface and tuning, the backend, and the safety rails on
// its destinations.
type configurer struct {
	iface string
	inv   *inventory
	tuner *tuner
	// backend, when set, is the generator every send uses.
	backend    pktgen.Backend
	threadInit func() error
	log        hclog.Logger
	// refresh, when set, pulls the whole member list from other members
	// at once (serf's push-pull) instead of waiting for gossip to bring
	// a receiver that joined a moment ago.
	refresh func()
	// gossip tells whether the agent runs gossip at all.
	gossip   bool
	allowDst []netip.Prefix
	frames   frameRails
	// targets confirms the receivers a destination belongs to
	// (targets.go).
	targets *targetBook
}

// configured is a send ready to start.
type configured struct {
	cfg      pktgen.Config
	backend  pktgen.Backend
	warnings []string
}

// prepare fills cfg's defaults (the agent's interface, the tuned CPUs and
// queues, the source address) and chooses its backend (backendName: the
// coordinator's choice, pktgen.BackendAuto for the best the host can run).
func (c *configurer) prepare(cfg pktgen.Config, backendName pktgen.BackendName) (*configured, error) {
	var warnings []string
	if err := checkIface("config.device", cfg.Device, c.iface); err != nil {
		return nil, err
	}
	cfg.Device = c.iface
	if !cfg.DstMin.IsValid() {
		return nil, failf(ErrInvalid, "config.dst_min: missing: the receiver's address")
	}
	if len(cfg.DstMAC) == 0 {
		return nil, failf(ErrInvalid, "config.dst_mac: missing: the receiver's MAC (Describe's nic.mac)")
	}
	link, err := c.inv.link(cfg.Device)
	if err != nil {
		return nil, failf(ErrHost, "config.device %s: %v", cfg.Device, err)
	}
	if err := c.frames.check(&cfg, link.mac); err != nil {
		return nil, err
	}
	if !cfg.SrcMin.IsValid() {
		src, ok := topology.SourceAddr(link.addrs, cfg.DstMin)
		if !ok {
			return nil, failf(ErrInvalid, "config.src_min: missing, and %s has no address of the destination's family", cfg.Device)
		}
		cfg.SrcMin = src
	}
	var be pktgen.Backend
	var why string
	if c.backend != nil {
		be, why = c.backend, "the agent's configured generator"
	} else {
		be, why, err = choose.Backend(backendName, cfg.Device, choose.Options{Log: c.log, ThreadInit: c.threadInit})
	}
	switch {
	case errors.Is(err, choose.ErrUnknown):
		return nil, failf(ErrInvalid, "config.backend: %v", err)
	case err != nil:
		return nil, failf(ErrHost, "config.backend: %v", err)
	}
	name := be.Name()
	c.log.Debug("backend chosen", "backend", name, "why", why)
	if len(cfg.CPUs) == 0 {
		cpus, queues := c.tuner.tuned()
		if len(cfg.Queues) == 0 && len(queues) > 0 {
			cfg.CPUs, cfg.Queues = tunedThreads(cpus, queues, name == pktgen.BackendKernel)
		} else {
			cfg.CPUs, _ = tunedThreads(cpus, nil, false)
		}
		if len(cfg.CPUs) == 0 {
			cfg.CPUs = []int{0}
			warnings = append(warnings, "config.cpus: not given and nothing tuned: one thread on CPU 0")
		}
	}
	if err := cfg.Validate(); err != nil {
		return nil, fail(ErrInvalid, err)
	}
	if name != pktgen.BackendKernel {
		if err := cfg.UserspaceCheck(name); err != nil {
			return nil, fail(ErrInvalid, err)
		}
	}
	return &configured{cfg: cfg, backend: be, warnings: warnings}, nil
}

// tunedThreads are a send's threads on the tuned queues, whose IRQ
// queues[i] is pinned to cpus[i]. perQueue (the kernel backend, whose
// threads take several pktgen devices): one per queue, on the CPU of its
// IRQ, so that every queue sends (4 queues on CPUs 2, 3, 2, 3: devices
// 2q0, 3q1, 2q2, 3q3 on two threads). Otherwise one per CPU, on the
// first queue pinned to it (the userspace backends run one thread per
// CPU and send on the queue the CPU maps to). Without queues, the
// distinct CPUs.
func tunedThreads(cpus, queues []int, perQueue bool) (threadCPUs, threadQueues []int) {
	if perQueue {
		return cpus, queues
	}
	for i, cpu := range cpus {
		if slices.Contains(threadCPUs, cpu) {
			continue
		}
		threadCPUs = append(threadCPUs, cpu)
		if i < len(queues) {
			threadQueues = append(threadQueues, queues[i])
		}
	}
	return threadCPUs, threadQueues
}

// checkDestinations refuses destinations the safety rails do not allow.
// A receiver that joined a moment ago may not have reached this agent by
// gossip yet: with gossip it looks again for destinationSettle before
// refusing.
func (c *configurer) checkDestinations(ctx context.Context, cfg *pktgen.Config) error {
	if checkDestinations(cfg, nil, c.allowDst, c.gossip) == nil {
		return nil // inside --allow-dst: no receiver to ask
	}
	ts, refused := c.targets.targets(ctx, cfg)
	err := checkDestinations(cfg, ts, c.allowDst, c.gossip)
	var refreshing chan struct{} // closed when the refresh under way ends
	for deadline := time.Now().Add(destinationSettle); err != nil && c.gossip && time.Now().Before(deadline); {
		if c.refresh != nil && refreshing == nil {
			// Many agents joining at once: gossip alone can take longer.
			// In the background, so a slow peer cannot hold Configure
			// past its settle time or its caller's cancellation.
			refreshing = make(chan struct{})
			go func(done chan struct{}) { defer close(done); c.refresh() }(refreshing)
		}
		if err := ctxsleep.Sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
		ts, refused = c.targets.targets(ctx, cfg)
		err = checkDestinations(cfg, ts, c.allowDst, c.gossip)
	}
	if err != nil && refused != "" {
		err = fmt.Errorf("%w; %s", err, refused)
	}
	if err != nil {
		c.log.Warn("configure refused", "error", err)
		return failf(ErrRefused, "configure: %v", err)
	}
	return nil
}
