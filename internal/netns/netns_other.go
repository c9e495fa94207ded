//go:build !linux

package netns
