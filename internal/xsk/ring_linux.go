//go:build linux

package xsk

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ring is one mmap'd ring: the shared producer and consumer indexes, the
// flags word (nil on kernels before 5.4) and the descriptors, with this
// side's cached copy of the other side's index.
type ring struct {
	mem            []byte
	producer       *uint32
	consumer       *uint32
	flags          *uint32
	descs          unsafe.Pointer
	mask, size     uint32
	cachedProducer uint32
	cachedConsumer uint32
}

// mapRing mmaps the ring at pgoff of fd with n descriptors of descSize
// bytes laid out as off says.
func mapRing(fd int, pgoff int64, off unix.XDPRingOffset, n, descSize int, hasFlags bool) (*ring, error) {
	length := int(off.Desc) + n*descSize
	mem, err := unix.Mmap(fd, pgoff, length, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return nil, fmt.Errorf("mmap %d bytes at page offset %#x: %w", length, pgoff, err)
	}
	base := unsafe.Pointer(&mem[0])
	r := &ring{
		mem:      mem,
		producer: (*uint32)(unsafe.Add(base, off.Producer)),
		consumer: (*uint32)(unsafe.Add(base, off.Consumer)),
		descs:    unsafe.Add(base, off.Desc),
		mask:     uint32(n - 1),
		size:     uint32(n),
	}
	if hasFlags {
		r.flags = (*uint32)(unsafe.Add(base, off.Flags))
	}
	// A producer's cache starts at the shared indexes (both 0 on a new
	// socket); a producer sees size free slots until it refreshes.
	r.cachedProducer = atomic.LoadUint32(r.producer)
	r.cachedConsumer = atomic.LoadUint32(r.consumer)
	return r, nil
}

func (r *ring) unmap() error {
	if r == nil || r.mem == nil {
		return nil
	}
	err := unix.Munmap(r.mem)
	r.mem = nil
	return err
}

// free is how many slots a producer may fill now, refreshing the cached
// consumer index only when fewer than want are known to be free.
func (r *ring) free(want uint32) uint32 {
	n := r.size - (r.cachedProducer - r.cachedConsumer)
	if n >= want {
		return n
	}
	r.cachedConsumer = atomic.LoadUint32(r.consumer)
	return r.size - (r.cachedProducer - r.cachedConsumer)
}

// publish makes the producer's next n slots the kernel's.
func (r *ring) publish(n uint32) {
	r.cachedProducer += n
	atomic.StoreUint32(r.producer, r.cachedProducer)
}

// ready is how many slots a consumer may read now, refreshing the cached
// producer index when none are known to be ready.
func (r *ring) ready() uint32 {
	n := r.cachedProducer - r.cachedConsumer
	if n > 0 {
		return n
	}
	r.cachedProducer = atomic.LoadUint32(r.producer)
	return r.cachedProducer - r.cachedConsumer
}

// release gives the consumer's next n slots back to the kernel.
func (r *ring) release(n uint32) {
	r.cachedConsumer += n
	atomic.StoreUint32(r.consumer, r.cachedConsumer)
}

// needsWakeup reads the ring's XDP_RING_NEED_WAKEUP flag; a ring without
// a flags word (need_wakeup off) always needs one.
func (r *ring) needsWakeup() bool {
	if r == nil {
		return false
	}
	if r.flags == nil {
		return true
	}
	return atomic.LoadUint32(r.flags)&unix.XDP_RING_NEED_WAKEUP != 0
}

// addr is the address slot i of a fill or completion ring.
func (r *ring) addr(i uint32) *uint64 {
	return (*uint64)(unsafe.Add(r.descs, uintptr(i&r.mask)*8))
}

// desc is descriptor slot i of an RX or TX ring.
func (r *ring) desc(i uint32) *unix.XDPDesc {
	return (*unix.XDPDesc)(unsafe.Add(r.descs, uintptr(i&r.mask)*unsafe.Sizeof(unix.XDPDesc{})))
}
