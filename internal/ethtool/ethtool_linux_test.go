//go:build linux

package ethtool

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"
)

// Loopback has no driver information (EOPNOTSUPP), and a missing name is
// ENODEV: each error matches its errno and its sentinel.
func TestErrors(t *testing.T) {
	r, err := Open("lo")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Driver(); !errors.Is(err, ErrNotSupported) || !errors.Is(err, unix.EOPNOTSUPP) {
		t.Errorf("lo driver: %v, want ErrNotSupported and EOPNOTSUPP", err)
	}
	if _, err := r.Stats(); !errors.Is(err, ErrNotSupported) {
		t.Errorf("lo statistics: %v, want ErrNotSupported", err)
	}
	gone, err := Open("nosuch0")
	if err != nil {
		t.Fatal(err)
	}
	defer gone.Close()
	if _, err := gone.Stats(); !errors.Is(err, ErrNoInterface) || !errors.Is(err, unix.ENODEV) || errors.Is(err, ErrNotSupported) {
		t.Errorf("missing interface: %v, want ErrNoInterface and ENODEV", err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
}
