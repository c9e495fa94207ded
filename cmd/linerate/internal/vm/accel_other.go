//go:build !linux

package vm

import "errors"

// kvmUsable fails: KVM is Linux's.
func kvmUsable() error { return errors.New("KVM needs a Linux host") }
