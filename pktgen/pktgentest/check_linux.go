//go:build linux

package pktgentest

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/vishvananda/netns"

	"github.com/linerate/linerate/pktgen"
)

// Enter returns a ThreadInit that moves the calling OS thread into the
// named network namespace (/run/netns/name).
func Enter(name string) func() error {
	return func() error {
		h, err := netns.GetFromName(name)
		if err != nil {
			return fmt.Errorf("open netns %s: %w", name, err)
		}
		defer h.Close()
		if err := netns.Set(h); err != nil {
			return fmt.Errorf("enter netns %s: %w", name, err)
		}
		return nil
	}
}

// Check verifies stream s against what thread s of a run should have
// sent from template f: sequences 1..n each exactly once and none after,
// the pktgen header intact, the UDP source port of the cycle, the
// timestamp within [from, to] (or zero with NO_TIMESTAMP), and the UDP
// checksum when the frames carry one. It returns the problems found (the
// first few of each kind).
func (s *Sink) Check(st int, n uint64, f *pktgen.Frame, from, to time.Time) ([]string, error) {
	extra := min(uint64(s.lay.MaxSeq)-n, 16)
	slots, err := s.Stream(st, int(n+extra))
	if err != nil {
		return nil, err
	}
	var probs []string
	kinds := map[string]int{}
	add := func(kind, format string, args ...any) {
		if kinds[kind]++; kinds[kind] <= 3 {
			probs = append(probs, fmt.Sprintf("stream %d: ", st)+fmt.Sprintf(format, args...))
		}
	}
	span := uint32(f.SportMax-f.SportMin) + 1
	for i, sl := range slots {
		seq := uint32(i + 1)
		if uint64(seq) > n {
			if sl.Count != 0 {
				add("extra", "seq %d beyond the %d sent arrived %d times", seq, n, sl.Count)
			}
			continue
		}
		if sl.Count != 1 {
			add("count", "seq %d arrived %d times", seq, sl.Count)
			continue
		}
		if sl.Header.Seq != seq {
			add("header", "seq %d slot holds header %+v", seq, sl.Header)
		}
		if p := binary.BigEndian.Uint16(sl.UDP[0:]); p != f.SportMin+uint16((seq-1)%span) {
			add("sport", "seq %d: UDP source port %d, want %d", seq, p, f.SportMin+uint16((seq-1)%span))
		}
		if f.Timestamp {
			ts := time.Unix(int64(sl.Header.TvSec), int64(sl.Header.TvUsec)*1000)
			if sl.Header.TvUsec >= 1e6 || ts.Before(from.Add(-time.Second)) || ts.After(to.Add(time.Second)) {
				add("time", "seq %d: timestamp %d.%06d outside the run %s - %s", seq, sl.Header.TvSec, sl.Header.TvUsec, from.Format(time.StampMicro), to.Format(time.StampMicro))
			}
		} else if sl.Header.TvSec != 0 || sl.Header.TvUsec != 0 {
			add("time", "seq %d: timestamp set with NO_TIMESTAMP", seq)
		}
		if f.UDPCsum && !udpChecksumOK(f, sl) {
			add("csum", "seq %d: UDP checksum %#04x does not verify", seq, binary.BigEndian.Uint16(sl.UDP[6:]))
		}
	}
	for k, c := range kinds {
		if c > 3 {
			probs = append(probs, fmt.Sprintf("stream %d: ... %d %s problems in all", st, c, k))
		}
	}
	return probs, nil
}

// udpChecksumOK rebuilds the frame from the template and the recorded
// UDP and pktgen headers and verifies the UDP checksum.
func udpChecksumOK(f *pktgen.Frame, sl Slot) bool {
	b := append([]byte(nil), f.Bytes...)
	copy(b[f.UDPOff:], sl.UDP[:])
	sl.Header.Encode(b[f.HdrOff:])
	var sum uint32
	add := func(p []byte) {
		for len(p) >= 2 {
			sum += uint32(binary.BigEndian.Uint16(p))
			p = p[2:]
		}
		if len(p) == 1 {
			sum += uint32(p[0]) << 8
		}
	}
	if f.IPv6 {
		add(b[f.L3Off+8 : f.L3Off+40])
	} else {
		add(b[f.L3Off+12 : f.L3Off+20])
	}
	u := b[f.UDPOff:]
	sum += 17 + uint32(len(u))
	add(u)
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return sum == 0xffff
}
