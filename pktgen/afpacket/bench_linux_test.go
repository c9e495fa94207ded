//go:build linux && traffic

package afpacket

import (
	"context"
	"fmt"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/pktgen/internal/engine"
	"github.com/linerate/linerate/pktgen/pktgentest"
)

// BenchmarkVeth64: one thread, 64-byte frames (60 without FCS) over a
// veth pair for 2 s, every frame counted by the peer's XDP sink; pps for
// sendmmsg batch sizes. Run: go test -tags traffic -run XXX -bench Veth64 -benchtime
// 1x -v ./pktgen/afpacket/
func BenchmarkVeth64(b *testing.B) {
	for _, batch := range []int{1, 16, 64, 256} {
		b.Run(fmt.Sprintf("sendmmsg/batch%d", batch), func(b *testing.B) {
			s := pktgentest.NewSetup(b, 1, []int{0}, 1<<22, func(c *pktgen.Config) { c.Duration, c.UDPSrcMax = 2*time.Second, 0 })
			be := newBackend(b, s)
			be.Log, be.Batch = nil, batch
			for b.Loop() {
				sum, err := be.Run(context.Background(), s.Cfg, nil)
				if err != nil {
					b.Fatal(err)
				}
				st, _ := s.Sink.WaitFor(sum.Packets, 2*time.Second)
				b.ReportMetric(sum.PPS, "pps")
				b.Logf("%d frames in %d µs: %.0f kpps, sink saw %d, %d errors", sum.Packets, sum.USec, sum.PPS/1e3, st.Test, sum.Errors)
			}
		})
	}
	// PACKET_TX_RING (TPACKET_V2), the same frames and stamping, for the
	// comparison; not a backend.
	for _, batch := range []int{64, 256} {
		b.Run(fmt.Sprintf("txring/batch%d", batch), func(b *testing.B) {
			s := pktgentest.NewSetup(b, 1, []int{0}, 1<<22, func(c *pktgen.Config) { c.UDPSrcMax = 0 })
			for b.Loop() {
				var pps float64
				var sent uint64
				err := engine.OnThread(s.EnterA(), func() error {
					var set unix.CPUSet
					set.Set(0)
					if err := unix.SchedSetaffinity(0, &set); err != nil {
						return err
					}
					var err error
					sent, pps, err = txRing(s, batch, 2*time.Second)
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
				st, _ := s.Sink.WaitFor(sent, 2*time.Second)
				b.ReportMetric(pps, "pps")
				b.Logf("%d frames: %.0f kpps, sink saw %d", sent, pps/1e3, st.Test)
			}
		})
	}
}

// txRing sends for d through a TPACKET_V2 TX ring, batch frames per
// send(2).
func txRing(s *pktgentest.Setup, batch int, d time.Duration) (uint64, float64, error) {
	ifi, err := engine.Up(pktgen.BackendAFPacket, s.Cfg.Device)
	if err != nil {
		return 0, 0, err
	}
	fd, err := openSocket(ifi, true)
	if err != nil {
		return 0, 0, err
	}
	defer unix.Close(fd)
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_VERSION, unix.TPACKET_V2); err != nil {
		return 0, 0, err
	}
	const frameSize, blockSize, blocks = 128, 1 << 16, 16
	req := unix.TpacketReq{Block_size: blockSize, Block_nr: blocks, Frame_size: frameSize, Frame_nr: blockSize / frameSize * blocks}
	if err := unix.SetsockoptTpacketReq(fd, unix.SOL_PACKET, unix.PACKET_TX_RING, &req); err != nil {
		return 0, 0, err
	}
	ring, err := unix.Mmap(fd, 0, blockSize*blocks, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return 0, 0, err
	}
	defer unix.Munmap(ring)
	f := s.Frames[0]
	const dataOff = 32 // TPACKET_ALIGN(sizeof(struct tpacket2_hdr))
	nframes := int(req.Frame_nr)
	for i := range nframes {
		copy(ring[i*frameSize+dataOff:], f.Bytes)
	}
	var seq uint32
	slot := 0
	start := time.Now()
	for time.Since(start) < d {
		now := time.Now()
		for range batch {
			fr := ring[slot*frameSize:]
			hdr := (*unix.Tpacket2Hdr)(unsafe.Pointer(&fr[0]))
			for hdr.Status != unix.TP_STATUS_AVAILABLE {
				if _, err := unix.Write(fd, nil); err != nil && err != unix.EAGAIN && err != unix.ENOBUFS {
					return 0, 0, err
				}
			}
			seq++
			f.Stamp(fr[dataOff:dataOff+len(f.Bytes)], seq, now)
			hdr.Len = uint32(len(f.Bytes))
			hdr.Status = unix.TP_STATUS_SEND_REQUEST
			slot = (slot + 1) % nframes
		}
		if _, err := unix.Write(fd, nil); err != nil && err != unix.EAGAIN && err != unix.ENOBUFS {
			return 0, 0, err
		}
	}
	// Let the last batch go.
	for range 100 {
		if _, err := unix.Write(fd, nil); err == nil {
			break
		}
	}
	el := time.Since(start)
	return uint64(seq), float64(seq) / el.Seconds(), nil
}
