package vm

import (
	_ "embed"
	"fmt"
	"regexp"
	"strings"
)

// PinsFile is where the pinned package versions live, named in errors
// that ask for the pin to be updated.
const PinsFile = "cmd/linerate/internal/vm/pins.txt"

//go:embed pins.txt
var pinsText string

// Pin is one Debian package at an exact version, and the sha256 of its .deb.
type Pin struct {
	Package string `json:"package"`
	Version string `json:"version"`
	SHA256  string `json:"sha256"`
}

// String is the package=version form apt-get takes.
func (p Pin) String() string { return p.Package + "=" + p.Version }

// Pins are the packages of a guest: the kernel image and busybox-static.
type Pins struct {
	Kernel  Pin
	Busybox Pin
}

// List is the pins in fetch order.
func (p Pins) List() []Pin { return []Pin{p.Kernel, p.Busybox} }

var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

// ParsePins reads a pins file: one "role package version sha256" line per
// package (roles kernel and busybox), # comments and blank lines ignored.
func ParsePins(text string) (Pins, error) {
	var p Pins
	for i, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		f := strings.Fields(l)
		if len(f) != 4 {
			return Pins{}, fmt.Errorf("parse pins line %d: %d fields, want role, package, version, sha256", i+1, len(f))
		}
		if !sha256Hex.MatchString(f[3]) {
			return Pins{}, fmt.Errorf("parse pins line %d: sha256 %q is not 64 lowercase hex digits", i+1, f[3])
		}
		pin := Pin{Package: f[1], Version: f[2], SHA256: f[3]}
		var slot *Pin
		switch f[0] {
		case "kernel":
			slot = &p.Kernel
		case "busybox":
			slot = &p.Busybox
		default:
			return Pins{}, fmt.Errorf("parse pins line %d: role %q, want kernel or busybox", i+1, f[0])
		}
		if slot.Package != "" {
			return Pins{}, fmt.Errorf("parse pins line %d: a second %s pin", i+1, f[0])
		}
		*slot = pin
	}
	if p.Kernel.Package == "" || p.Busybox.Package == "" {
		return Pins{}, fmt.Errorf("parse pins: want one kernel and one busybox pin, have %+v", p)
	}
	if !strings.HasPrefix(p.Kernel.Package, "linux-image-") {
		return Pins{}, fmt.Errorf("parse pins: kernel package %q is not a linux-image-*", p.Kernel.Package)
	}
	return p, nil
}

// DefaultPins are the pins of pins.txt.
func DefaultPins() (Pins, error) {
	p, err := ParsePins(pinsText)
	if err != nil {
		return Pins{}, fmt.Errorf("%s: %w", PinsFile, err)
	}
	return p, nil
}
