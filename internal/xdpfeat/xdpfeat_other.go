//go:build !linux

package xdpfeat

// Read knows no XDP features off Linux.
func Read(ifindex int) (uint64, error) { return 0, ErrUnknown }
