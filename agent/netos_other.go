//go:build !linux

package agent

import "errors"

// hostNetOS cannot read routes off Linux: a sender there needs
// --allow-mgmt-iface.
type hostNetOS struct{}

var errNoNetlink = errors.New("reading routes and device counters needs Linux (netlink)")

func (hostNetOS) defaultRouteIfaces() ([]string, error) { return nil, errNoNetlink }

func (hostNetOS) txDropped(string) (uint64, error) { return 0, errNoNetlink }
