//go:build !linux && !darwin

package agent

// kernelRelease is unknown off Linux and macOS.
func kernelRelease() string { return "" }
