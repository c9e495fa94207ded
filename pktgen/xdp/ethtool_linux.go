//go:build linux

package xdp

import "github.com/linerate/linerate/internal/ethtool"

// driverInfo is the interface's driver name and its ethtool statistics
// (name → value), read in the calling thread's network namespace.
func driverInfo(iface string) (string, map[string]uint64, error) {
	r, err := ethtool.Open(iface)
	if err != nil {
		return "", nil, err
	}
	defer r.Close()
	driver, err := r.Driver()
	if err != nil {
		return "", nil, err
	}
	stats, err := r.Stats()
	return driver, stats, err
}
