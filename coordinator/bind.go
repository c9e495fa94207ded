package coordinator

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/linerate/linerate/internal/cluster/gossip"
)

// bindHost is cfg.Bind with a host: its own, else the management
// address, Advertise's host when it is an address, else the address this
// host sends from to the first Join seed with a route — the coordinator
// gossips on the network its agents are reached on, never on every
// address unless asked (0.0.0.0).
func bindHost(cfg ClusterConfig) (string, error) {
	h, port, err := net.SplitHostPort(cfg.Bind)
	if err != nil {
		return "", fmt.Errorf("--bind %q: %w (want HOST:PORT, or :PORT for the management address)", cfg.Bind, err)
	}
	if h != "" {
		return cfg.Bind, nil
	}
	if ah, _, err := net.SplitHostPort(cfg.Advertise); err == nil {
		if ip, err := netip.ParseAddr(ah); err == nil && !ip.IsUnspecified() {
			return net.JoinHostPort(ip.String(), port), nil
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var errs []error
	for _, seed := range cfg.Join {
		ip, err := gossip.SourceToward(ctx, seed)
		if err == nil {
			return net.JoinHostPort(ip.String(), port), nil
		}
		errs = append(errs, err)
	}
	return "", fmt.Errorf("--bind %s names no host and no --join seed has a route (%w): give --bind HOST:PORT", cfg.Bind, errors.Join(errs...))
}
