//go:build linux && traffic

package xdp

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/pktgen/pktgentest"
)

// BenchmarkVeth64 sends with one thread, 64-byte frames (60 without FCS),
// over a veth pair for 1 s (at ~18 Mpps within the sink's 32 Mi
// sequences), every frame counted by the peer's XDP sink; it reports pps
// for batch sizes and repeats. Run: go test -tags traffic -run XXX -bench
// Veth64 -benchtime 1x -v ./pktgen/xdp/
func BenchmarkVeth64(b *testing.B) {
	for _, v := range []struct{ batch, repeat uint32 }{{64, 1 << 20}, {64, 1 << 22}, {64, 1 << 24}, {128, 1 << 22}, {256, 1 << 22}, {16, 1 << 22}} {
		for _, ts := range []bool{true, false} {
			b.Run(fmt.Sprintf("batch%d/repeat%d/timestamp=%v", v.batch, v.repeat, ts), func(b *testing.B) {
				s := pktgentest.NewSetup(b, 1, []int{0}, 1<<25, func(c *pktgen.Config) {
					c.Duration, c.UDPSrcMax = time.Second, 0
					if !ts {
						c.Flags = []string{"NO_TIMESTAMP"}
					}
				})
				be := newBackend(b, s)
				be.Log = nil
				be.BatchSize, be.Repeat = v.batch, v.repeat
				for b.Loop() {
					sum, err := be.Run(context.Background(), s.Cfg, nil)
					if err != nil {
						b.Fatal(err)
					}
					st, _ := s.Sink.WaitFor(sum.Packets, 2*time.Second)
					b.ReportMetric(sum.PPS, "pps")
					b.ReportMetric(float64(st.Test)/float64(sum.Packets)*100, "%seen")
					b.Logf("%d frames in %d µs: %.2f Mpps, sink saw %d, %d errors", sum.Packets, sum.USec, sum.PPS/1e6, st.Test, sum.Errors)
				}
			})
		}
	}
}
