//go:build linux && traffic

package receiver

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/linerate/linerate/internal/netns/nstest"
)

// manyStreams are streams 1,100 streams (550 source addresses × 2 ports)
// of 40 sequences each, interleaved so that every stream is live at
// once: every third stream misses one sequence, every fifth sends one
// twice.
func manyStreams(p *nstest.Pair) (frames [][]byte, streams int) {
	const sources, ports, seqs = 550, 2, 40
	type stream struct {
		src  netip.Addr
		port uint16
		seqs []uint32
	}
	var all []stream
	for i := range sources * ports {
		a := netip.AddrFrom4([4]byte{198, 18, byte(1 + i/ports/250), byte(1 + i/ports%250)})
		s := stream{src: a, port: uint16(9 + i%ports)}
		for q := uint32(1); q <= seqs; q++ {
			if i%3 == 0 && q == uint32(i%seqs)+1 {
				continue // lost
			}
			s.seqs = append(s.seqs, q)
			if i%5 == 0 && q == 7 {
				s.seqs = append(s.seqs, q) // duplicate
			}
		}
		all = append(all, s)
	}
	for k := 0; ; k++ {
		sent := false
		for _, s := range all {
			if k < len(s.seqs) {
				frames = append(frames, withMACs(testFrame{src: s.src, port: s.port, seq: s.seqs[k]}.bytes(), p.B.MAC, p.A.MAC))
				sent = true
			}
		}
		if !sent {
			return frames, len(all)
		}
	}
}

// TestReceiveManyStreams counts 1,100 streams on a veth with each method
// (afxdp's two sockets, one per queue, counting into forks of one table),
// exactly: every stream's received, max_seq, duplicates and missing as
// the Go core computes them for the same frames, none overflowing a table
// sized for them — and, with a table of 1,024, each of the 1,024 streams
// counted as the Go core counts it and exactly the packets of the 76
// streams beyond it as overflow (with afxdp, whichever 76 its readers
// left out).
func TestReceiveManyStreams(t *testing.T) {
	for _, method := range []Method{MethodXDP, MethodAFPacket, MethodAFXDP} {
		for _, table := range []int{1100 + 275, 1024} {
			t.Run(fmt.Sprintf("%s/table%d", method, table), func(t *testing.T) {
				p := nstest.NewPair(t, 2)
				frames, streams := manyStreams(p)
				o := Options{Method: method, MaxStreams: table, Window: MinWindow}
				want, wantOverflow := oracle(t, o, frames)
				if table >= streams && (len(want) != streams || wantOverflow != 0) || table < streams && (len(want) != table || wantOverflow == 0) {
					t.Fatalf("oracle: %d streams, overflow %d", len(want), wantOverflow)
				}
				r := startIn(t, t.Context(), p.B, o)
				if m, why := r.Method(); m != method {
					t.Fatalf("method %s (%s), want %s", m, why, method)
				}
				sendFrames(t, p.A, frames)
				waitFor(t, r, uint64(len(frames)))
				rep, err := r.Stop()
				if err != nil {
					t.Fatal(err)
				}
				if method == MethodAFXDP && table < streams {
					// Two readers, one a queue, race for the table's last
					// slots: which streams are left out depends on which
					// reader took its frames first. Each stream counted is
					// then the Go core's count of it, and the overflow is
					// every packet of the others.
					want, wantOverflow = raceOracle(t, o, frames, streams, rep.Streams)
				}
				if rep.OverflowPackets != wantOverflow || rep.TestPackets() != uint64(len(frames)) {
					t.Errorf("table %d: overflow %d, test packets %d; want %d and %d", table, rep.OverflowPackets, rep.TestPackets(), wantOverflow, len(frames))
				}
				// Every counted stream timed every packet it received,
				// the table's last slot as its first (frames are stamped
				// as sent: no delay negative or absurd).
				for _, s := range rep.Streams {
					if l := s.Latency; l == nil || l.Samples() != s.Received || l.Negative != 0 || l.Absurd != 0 {
						t.Fatalf("stream %v:%d: latency %s over %d received", s.Src, s.DstPort, latencyJSON(l), s.Received)
					}
				}
				if table >= streams {
					if d := diffStreams(want, rep.Streams); d != "" {
						t.Errorf("streams (-oracle +receiver):\n%s", d)
					}
					var missing, dups uint64
					for _, s := range rep.Streams {
						missing, dups = missing+s.Missing, dups+s.Duplicates
					}
					// 367 streams miss one sequence (those of seq 40 a tail
					// loss, not a gap), 220 send one twice.
					if dups != 220 || len(rep.Streams) != streams {
						t.Errorf("%d streams, %d duplicates, %d missing", len(rep.Streams), dups, missing)
					}
				} else if len(rep.Streams) != table {
					t.Errorf("%d streams counted, want the table's %d", len(rep.Streams), table)
				} else if d := diffStreams(want, rep.Streams); d != "" {
					t.Errorf("streams counted (-oracle +receiver):\n%s", d)
				}
			})
		}
	}
}

// raceOracle is what a receiver whose readers race for the slots of a
// table too small for frames' streams should report, given the streams
// got counted (in report order): each as the Go core counts it with room
// for all, and as overflow every packet of the streams left out.
func raceOracle(t *testing.T, o Options, frames [][]byte, streams int, got []StreamReport) (want []StreamReport, overflow uint64) {
	t.Helper()
	o.MaxStreams = streams
	all, _ := oracle(t, o, frames)
	type key struct {
		src, dst netip.Addr
		port     uint16
	}
	byKey := map[key]StreamReport{}
	for _, s := range all {
		byKey[key{s.Src, s.Dst, s.DstPort}] = s
		overflow += s.Received
	}
	for _, g := range got {
		w, ok := byKey[key{g.Src, g.Dst, g.DstPort}]
		if !ok {
			t.Fatalf("stream %v → %v:%d counted, none sent", g.Src, g.Dst, g.DstPort)
		}
		want = append(want, w)
		overflow -= w.Received
	}
	return want, overflow
}
