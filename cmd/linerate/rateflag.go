package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/linerate/linerate/coordinator"
)

// maxFlagPPS bounds a --rate: far beyond any link (400 Gb/s of 64-byte
// frames is 595 Mpps), well inside a uint64.
const maxFlagPPS = 1e12

// ppsValue is a --rate in packets per second: a whole number of at least
// 1 (1.5e6 is fine); NaN, inf, fractions and anything ≤ 0 are refused as
// the flag is parsed. Left out, the rate stays 0: as fast as the sender
// goes.
type ppsValue struct{ p *uint64 }

// ppsVar registers --name as a ppsValue into p.
func ppsVar(fl *pflag.FlagSet, p *uint64, name, usage string) {
	fl.Var(ppsValue{p}, name, usage)
}

func (v ppsValue) Set(s string) error {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	switch {
	case err != nil || math.IsNaN(f) || math.IsInf(f, 0):
		return fmt.Errorf("want packets per second: a whole number such as 10000 or 1.5e6")
	case f < 1:
		return fmt.Errorf("want at least 1 pps per thread (leave --rate out to send as fast as the sender goes)")
	case f != math.Trunc(f):
		return fmt.Errorf("want a whole number of packets per second")
	case f > maxFlagPPS:
		return fmt.Errorf("want at most %g pps", float64(maxFlagPPS))
	}
	*v.p = uint64(f)
	return nil
}

func (v ppsValue) String() string {
	if v.p == nil {
		return "0"
	}
	return strconv.FormatUint(*v.p, 10)
}

func (ppsValue) Type() string { return "pps" }

// checkRateFlags refuses --rate pps over --threads threads (0: automatic)
// that leaves a thread below 1 pps, naming both flags.
func checkRateFlags(pps uint64, threads int) error {
	if err := coordinator.CheckRate(pps, threads); err != nil {
		return usagef("--rate %d with --threads %d: %v", pps, threads, err)
	}
	return nil
}
