package lab

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Shaping limits: tbf below 8 kbit/s cannot hold one frame's burst in
// its queue, and no link a lab models is faster than 400 Gbit/s.
const (
	MinShapeBPS = 8000
	MaxShapeBPS = 400e9
)

// ParseBitRate reads tc-style rates: 200mbit, 1gbit, 500kbit, 64000bit
// or plain bits per second, from MinShapeBPS to MaxShapeBPS.
func ParseBitRate(s string) (uint64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := uint64(1)
	for _, u := range []struct {
		suffix string
		mult   uint64
	}{{"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}, {"bit", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSuffix(t, u.suffix), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v <= 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("want a rate such as 200mbit, 1gbit, 500kbit or bits per second")
	}
	bps := v * float64(mult)
	if err := checkShape(bps); err != nil {
		return 0, err
	}
	return uint64(bps), nil
}

func checkShape(bps float64) error {
	if bps < MinShapeBPS || bps > MaxShapeBPS {
		return fmt.Errorf("%.0f bit/s: want 8kbit to 400gbit", bps)
	}
	return nil
}
