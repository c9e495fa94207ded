package agent

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/linerate/linerate/internal/enum"
	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/topology"
)

// Roles of the runs counted in linerate_agent_runs_*.
const (
	runSender   = "sender"
	runReceiver = "receiver"
)

// metrics are the agent's Prometheus metrics, in a registry of its own.
type metrics struct {
	reg                                 *prometheus.Registry
	sent, sendErrors, received          prometheus.Counter
	runsStarted, runsFinished, runsFail *prometheus.CounterVec
	info                                *prometheus.GaugeVec
}

// newMetrics registers the metrics; the gauges read s when scraped.
func newMetrics(s *service) *metrics {
	reg := prometheus.NewRegistry()
	f := promauto.With(reg)
	m := &metrics{reg: reg}
	m.sent = f.NewCounter(prometheus.CounterOpts{Name: "linerate_agent_packets_sent_total",
		Help: "Packets the sender sent, counted live while a run goes and completed from its result."})
	m.sendErrors = f.NewCounter(prometheus.CounterOpts{Name: "linerate_agent_send_errors_total",
		Help: "Packets the sender failed to send."})
	m.received = f.NewCounter(prometheus.CounterOpts{Name: "linerate_agent_packets_received_total",
		Help: "Test packets the receiver counted, as collected by the coordinator."})
	runs := func(what, help string) *prometheus.CounterVec {
		return f.NewCounterVec(prometheus.CounterOpts{Name: "linerate_agent_runs_" + what + "_total", Help: help}, []string{"role"})
	}
	m.runsStarted = runs("started", "Runs started: sends started (role sender), receivers armed (role receiver).")
	m.runsFinished = runs("finished", "Runs that ended without an error (stopped runs included).")
	m.runsFail = runs("failed", "Runs that ended with an error.")
	for _, r := range []struct {
		role string
		on   bool
	}{{runSender, s.sends()}, {runReceiver, s.receives()}} {
		if r.on { // show zeros from the start
			for _, v := range []*prometheus.CounterVec{m.runsStarted, m.runsFinished, m.runsFail} {
				v.WithLabelValues(r.role)
			}
		}
	}
	f.NewGaugeFunc(prometheus.GaugeOpts{Name: "linerate_agent_lease_held",
		Help: "1 while a coordinator holds the agent's lease."}, s.leaseHeld)
	f.NewGaugeFunc(prometheus.GaugeOpts{Name: "linerate_agent_irqs_pinned",
		Help: "Queue IRQs this agent pinned to CPUs and has not restored yet."}, s.irqsPinned)
	f.NewGaugeFunc(prometheus.GaugeOpts{Name: "linerate_agent_tuning_journal_active",
		Help: "1 while a tuning journal of the data interface is on disk (tuned, not restored)."}, s.journalActive)
	m.info = f.NewGaugeVec(prometheus.GaugeOpts{Name: "linerate_agent_info",
		Help: "Always 1: the agent's version, role, data interface and sender backends."}, []string{"version", "role", "iface", "backend"})
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// setInfo sets linerate_agent_info (backends known after Inspect).
func (m *metrics) setInfo(cfg Config, backends []pktgen.BackendName) {
	m.info.Reset()
	m.info.WithLabelValues(cfg.Version, string(cfg.Role), cfg.Iface, strings.Join(enum.Strings(backends), ",")).Set(1)
}

// countSent adds what run r sent since it was last counted. Callers hold
// the sender's lock.
func (m *metrics) countSent(r *sendRun, packets, errs uint64) {
	if packets > r.countedPackets {
		m.sent.Add(float64(packets - r.countedPackets))
		r.countedPackets = packets
	}
	if errs > r.countedErrors {
		m.sendErrors.Add(float64(errs - r.countedErrors))
		r.countedErrors = errs
	}
}

// countReceived adds what the armed receiver counted since it was last
// collected. Callers hold the receiver's op lock (receiving.op).
func (m *metrics) countReceived(a *armed, packets uint64) {
	if packets > a.counted {
		m.received.Add(float64(packets - a.counted))
		a.counted = packets
	}
}

// runEnded counts a run of role that ended with err (nil: finished).
func (m *metrics) runEnded(role string, err error) {
	if err != nil {
		m.runsFail.WithLabelValues(role).Inc()
	} else {
		m.runsFinished.WithLabelValues(role).Inc()
	}
}

func (s *service) leaseHeld() float64 {
	if _, ok := s.leases.holder(); ok {
		return 1
	}
	return 0
}

func (s *service) irqsPinned() float64 { return float64(s.tuner.pinnedIRQs()) }

func (s *service) journalActive() float64 {
	if _, err := os.Stat(topology.JournalPath(s.cfg.StateDir, s.cfg.Iface)); err == nil {
		return 1
	}
	return 0
}

// startMetrics serves /metrics on cfg.MetricsAddr.
func (a *Agent) startMetrics() error {
	lis, err := net.Listen("tcp", a.cfg.MetricsAddr)
	if err != nil {
		return fmt.Errorf("agent metrics listen %s: %w", a.cfg.MetricsAddr, err)
	}
	log := a.log.Named("metrics").StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true})
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(a.svc.metrics.reg, promhttp.HandlerOpts{ErrorLog: log, Registry: a.svc.metrics.reg}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log}
	served := make(chan struct{})
	a.mu.Lock()
	a.metrics, a.mlis, a.mserved = srv, lis, served
	a.mu.Unlock()
	go func() {
		defer close(served)
		if err := srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Error("metrics server stopped", "error", err)
		}
	}()
	a.log.Info("serving metrics", "url", "http://"+lis.Addr().String()+"/metrics")
	return nil
}

// MetricsAddr is the address /metrics is served on (after Start; "" without
// --metrics).
func (a *Agent) MetricsAddr() string { return a.addrOf(&a.mlis) }
