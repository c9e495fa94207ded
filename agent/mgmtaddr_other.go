//go:build !linux

package agent

import "net/netip"

// defaultSource needs netlink: off Linux give --bind and --grpc a host.
func (hostNetOS) defaultSource() (netip.Addr, error) { return netip.Addr{}, errNoNetlink }
