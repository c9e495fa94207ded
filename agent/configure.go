package agent

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/linerate/linerate/internal/ctxsleep"
	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/pktgen/choose"
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

// prepare completes cfg as every send is composed (compose.go): the
// agent's interface, the tuned CPUs and queues, the source address; and
// chooses its backend once the rails passed (backendName: the
// coordinator's choice, pktgen.BackendAuto for the best the host can run;
// an agent with a generator of its own sends with that, whatever the
// name). The destination and its MAC are
// the coordinator's to give (Describe's nic.mac), never the neighbour
// table's.
func (c *configurer) prepare(ctx context.Context, cfg pktgen.Config, backendName pktgen.BackendName) (*configured, error) {
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
	choose := func(device string, threads int) (pktgen.Backend, error) {
		if c.backend != nil {
			c.log.Debug("backend chosen", "backend", c.backend.Name(), "why", "the agent's configured generator")
			return c.backend, nil
		}
		be, _, err := chooseBackend(backendName, device, configNames.Backend, choose.Options{Log: c.log, ThreadInit: c.threadInit, Threads: threads})
		return be, err
	}
	facts := c.deviceFacts()
	if err := resolveNode(&cfg, facts); err != nil {
		return nil, err
	}
	host := sendHost{link: c.inv.link, check: c.frames.check, place: c.tunedPlaces}
	out, be, warnings, err := compose(sendInput{cfg: cfg, choose: choose, names: configNames}, host)
	if err != nil {
		return nil, err
	}
	if be.Name() == pktgen.BackendKernel {
		if err := checkKernel(ctx, out, be, facts); err != nil {
			return nil, err
		}
	}
	return &configured{cfg: *out, backend: be, warnings: warnings}, nil
}

// tunedPlaces are where a send's threads run when the coordinator gave
// no CPUs: the queues tune pinned, on their CPUs; with nothing tuned,
// CPU 0, said in a warning.
func (c *configurer) tunedPlaces() ([]pktgen.QueuePin, []int, string, error) {
	cpus, queues := c.tuner.tuned()
	var pins []pktgen.QueuePin
	for i, q := range queues {
		pins = append(pins, pktgen.QueuePin{Queue: q, CPU: cpus[i]})
	}
	if len(pins) == 0 {
		return nil, nil, "config.cpus: not given and nothing tuned: one thread on CPU 0", nil
	}
	return pins, nil, "", nil
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

// rttProbe is the round trips of the composed send load as plan asks
// (rttConfig): the latency stream is sent by the afpacket backend whatever
// sends the load (it stamps every frame as it sends it, and kernel
// pktgen's threads would each need a queue of their own for a second
// stream), or by the agent's own generator when it has one.
func (c *configurer) rttProbe(load pktgen.Config, plan rttPlan) (*rttProbe, error) {
	cfg, err := rttConfig(load, plan)
	if err != nil {
		return nil, err
	}
	be := c.backend
	if be == nil {
		if be, _, err = chooseBackend(pktgen.BackendAFPacket, cfg.Device, "rtt", choose.Options{Log: c.log, ThreadInit: c.threadInit}); err != nil {
			return nil, err
		}
	}
	if err := checkBackend(&cfg, be); err != nil {
		return nil, err
	}
	return &rttProbe{cfg: cfg, backend: be}, nil
}
