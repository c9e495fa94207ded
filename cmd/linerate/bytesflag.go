package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// byteUnits are the suffixes a bytesValue takes, binary multiples.
var byteUnits = []struct {
	suffix string
	shift  uint
}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}}

// bytesValue is a memory size: a whole number of bytes, or of KiB, MiB,
// GiB or TiB ("512MiB", "1 GiB"); at least 1 byte.
type bytesValue struct{ p *uint64 }

// bytesVar registers --name as a bytesValue into p, whose value is the
// default.
func bytesVar(fl *pflag.FlagSet, p *uint64, name, usage string) {
	fl.Var(bytesValue{p}, name, usage)
}

func (v bytesValue) Set(s string) error {
	s = strings.TrimSpace(s)
	shift := uint(0)
	for _, u := range byteUnits {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			s, shift = strings.TrimSpace(n), u.shift
			break
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	switch {
	case err != nil:
		return fmt.Errorf("want a whole number of bytes, KiB, MiB, GiB or TiB, such as 512MiB")
	case n == 0:
		return fmt.Errorf("want at least 1 byte")
	case n > math.MaxUint64>>shift:
		return fmt.Errorf("too large")
	}
	*v.p = n << shift
	return nil
}

func (v bytesValue) String() string {
	if v.p == nil || *v.p == 0 {
		return "0"
	}
	for _, u := range byteUnits {
		if *v.p%(1<<u.shift) == 0 {
			return strconv.FormatUint(*v.p>>u.shift, 10) + u.suffix
		}
	}
	return strconv.FormatUint(*v.p, 10) + "B"
}

func (bytesValue) Type() string { return "bytes" }
