//go:build traffic

package scaletest

import (
	"bufio"
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/linerate/linerate/agent"
	"github.com/linerate/linerate/pktgen"
)

// A host of the fleet is this test binary run again with childEnv set:
// it runs its share of the agents, as one machine of a fleet would run
// one, and talks to the test over its standard input and output:
//
//	→ seed ADDR        its first agent is up (it joins nobody)
//	← SEED,SEED,…      the first agent of every host
//	→ started N FAILED every other agent started, joining those seeds
//	← (end of input)   shut every agent down and exit
const (
	childEnv   = "LINERATE_SCALE_CHILD" // "first,count,stride,senders,certdir,statedir"
	agentStart = 32                     // agents a host starts at once
)

func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		if dir := os.Getenv("LINERATE_SCALE_PROFILE"); dir != "" {
			// A CPU profile of each host, for diagnosis.
			f, err := os.Create(filepath.Join(dir, fmt.Sprintf("host-%d.pprof", os.Getpid())))
			if err == nil && pprof.StartCPUProfile(f) == nil {
				defer pprof.StopCPUProfile()
			}
		}
		if err := runChild(spec); err != nil {
			fmt.Fprintf(os.Stderr, "scale host: %v\n", err)
			pprof.StopCPUProfile()
			os.Exit(1)
		}
		pprof.StopCPUProfile()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// nullBackend "sends" nothing: the scale test times the control plane
// (discovery, health, leases, the scheduled start), not traffic.
type nullBackend struct{}

func (nullBackend) Name() pktgen.BackendName { return "null" }
func (nullBackend) Run(_ context.Context, cfg pktgen.Config, _ func(pktgen.Progress)) (*pktgen.Summary, error) {
	return &pktgen.Summary{Backend: "null", Device: cfg.Device}, nil
}

// gossipKey is the fleet's gossip key, the same in every process.
var gossipKey = []byte("linerate scale test gossip key!!")

func agentName(i int) string { return fmt.Sprintf("a%04d", i) }

// agentConfig is agent i of the fleet: a sender (null backend) when
// i < senders, else a receiver.
func agentConfig(i, senders int, certs, state string, join []string, log hclog.Logger) agent.Config {
	cfg := agent.Config{
		Name: agentName(i), Role: agent.RoleReceiver, Iface: "lo", Bind: "127.0.0.1:0", GRPCAddr: "127.0.0.1:0", Join: join,
		TLSDir: certs, StateDir: state, Version: "scale", Logger: log, GossipKey: gossipKey,
	}
	if i < senders {
		cfg.Role, cfg.Backend, cfg.AllowMgmtIface = agent.RoleSender, nullBackend{}, true
		cfg.AllowDst = []netip.Prefix{netip.MustParsePrefix("198.18.0.0/15")}
	}
	return cfg
}

// runChild is one host: agents first, first+stride, … (count of them).
func runChild(spec string) error {
	f := strings.Split(spec, ",")
	if len(f) != 6 {
		return fmt.Errorf("%s=%q: want first,count,stride,senders,certdir,statedir", childEnv, spec)
	}
	var n [4]int
	for i := range n {
		v, err := strconv.Atoi(f[i])
		if err != nil {
			return fmt.Errorf("%s=%q: field %d: %w", childEnv, spec, i+1, err)
		}
		n[i] = v
	}
	first, count, stride, senders, certs, state := n[0], n[1], n[2], n[3], f[4], f[5]
	log := hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: os.Stderr, Name: fmt.Sprintf("host%d", first)})
	agents := make([]*agent.Agent, count)
	start := func(j int, join []string) error {
		i := first + j*stride
		dir := fmt.Sprintf("%s/%s", state, agentName(i))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		a, err := agent.New(agentConfig(i, senders, certs, dir, join, log.Named(agentName(i))))
		if err != nil {
			return err
		}
		if err := a.Start(context.Background()); err != nil {
			return fmt.Errorf("agent %s: %w", agentName(i), err)
		}
		agents[j] = a
		return nil
	}
	defer func() {
		var wg sync.WaitGroup
		for _, a := range agents {
			if a != nil {
				wg.Go(func() {
					ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
					defer cancel()
					_ = a.Shutdown(ctx)
				})
			}
		}
		wg.Wait()
	}()
	if err := start(0, nil); err != nil {
		return err
	}
	fmt.Printf("seed %s\n", agents[0].GossipAddr())
	in := bufio.NewScanner(os.Stdin)
	if !in.Scan() {
		return nil // the test ended before the fleet started
	}
	seeds := strings.Split(strings.TrimSpace(in.Text()), ",")
	sem := make(chan struct{}, agentStart)
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := 0
	for j := 1; j < count; j++ {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := start(j, seeds); err != nil {
				log.Error("start", "error", err)
				mu.Lock()
				failed++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	fmt.Printf("started %d %d\n", count-1-failed, failed)
	for in.Scan() {
	}
	pprof.StopCPUProfile() // before the shutdown, which may be cut short
	return nil
}
