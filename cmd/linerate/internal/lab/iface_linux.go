//go:build linux

package lab

import (
	"fmt"
	"net"
)

// netInterface returns the ifindex of name in the calling thread's namespace.
func netInterface(name string) (int, error) {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return 0, fmt.Errorf("interface %s: %w", name, err)
	}
	return ifi.Index, nil
}
