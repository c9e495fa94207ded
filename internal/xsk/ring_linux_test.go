//go:build linux

package xsk

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// fakeRing is a ring over Go memory: the index words first, then n
// address slots, as the kernel lays out a fill ring.
func fakeRing(n int) *ring {
	mem := make([]uint64, 2+n)
	base := unsafe.Pointer(&mem[0])
	return &ring{
		producer: (*uint32)(base), consumer: (*uint32)(unsafe.Add(base, 4)),
		descs: unsafe.Add(base, 16), mask: uint32(n - 1), size: uint32(n),
	}
}

// TestRingWraps produces and consumes across the 32-bit index wrap and
// the ring's end: the producer sees the ring full until the consumer
// releases, and the consumer sees only what was published.
func TestRingWraps(t *testing.T) {
	r := fakeRing(8)
	start := ^uint32(0) - 5
	*r.producer, *r.consumer = start, start
	r.cachedProducer, r.cachedConsumer = start, start
	// The producer's side and the consumer's side share the memory but
	// not their caches, as the application and the kernel do.
	c := *r
	next := uint64(0)
	got := uint64(0)
	for round := range 20 {
		free := r.free(5)
		if free == 0 {
			t.Fatalf("round %d: ring full with nothing unconsumed", round)
		}
		k := min(free, 5)
		for i := range k {
			*r.addr(r.cachedProducer + i) = next
			next++
		}
		if c.ready() != 0 && round == 0 {
			t.Fatal("consumer saw slots before they were published")
		}
		r.publish(k)
		if r.free(8) != 8-k {
			t.Fatalf("round %d: free %d after publishing %d of 8", round, r.free(8), k)
		}
		n := c.ready()
		if n != k {
			t.Fatalf("round %d: consumer sees %d ready, want %d", round, n, k)
		}
		for i := range n {
			if v := *c.addr(c.cachedConsumer + i); v != got {
				t.Fatalf("round %d: slot %d = %d, want %d", round, i, v, got)
			}
			got++
		}
		c.release(n)
	}
	if got != next || next < 60 {
		t.Errorf("consumed %d of %d", got, next)
	}
}

func TestNeedsWakeupWithoutFlags(t *testing.T) {
	r := fakeRing(4)
	if !r.needsWakeup() {
		t.Error("a ring without need_wakeup must always ask for a syscall")
	}
	var flags uint32
	r.flags = &flags
	if r.needsWakeup() {
		t.Error("flag clear: no wakeup wanted")
	}
	flags = unix.XDP_RING_NEED_WAKEUP
	if !r.needsWakeup() {
		t.Error("flag set: wakeup wanted")
	}
}
