//go:build !linux

// Package netns makes network namespaces joined by veth pairs (Linux only).
package netns
