package cpuset

import (
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"
)

// maxCPUs bounds every CPU number this package accepts (CPUs are 0..maxCPUs-1).
const maxCPUs = 1 << 16

// Set is an immutable set of CPU numbers. The zero value is the empty set.
type Set struct {
	// words is a bitmap: CPU c is present iff bit c%64 of words[c/64] is set.
	// It never has trailing zero words, so equal sets have equal words.
	words []uint64
}

// Of returns the set of the given CPUs. It panics if a CPU is negative or
// not below the supported maximum (65536).
func Of(cpus ...int) Set {
	var w []uint64
	for _, c := range cpus {
		if c < 0 || c >= maxCPUs {
			panic(fmt.Sprintf("cpuset.Of: cpu %d out of range [0, %d)", c, maxCPUs))
		}
		w = withCPU(w, c)
	}
	return fromWords(w)
}

// withCPU sets bit cpu in w, growing w as needed.
func withCPU(w []uint64, cpu int) []uint64 {
	if i := cpu / 64; i >= len(w) {
		w = append(w, make([]uint64, i+1-len(w))...)
	}
	w[cpu/64] |= 1 << (cpu % 64)
	return w
}

// fromWords wraps w, dropping trailing zero words to keep Set canonical.
func fromWords(w []uint64) Set {
	for len(w) > 0 && w[len(w)-1] == 0 {
		w = w[:len(w)-1]
	}
	if len(w) == 0 {
		return Set{}
	}
	return Set{words: w}
}

// word returns words[i], or 0 beyond the end.
func (s Set) word(i int) uint64 {
	if i < len(s.words) {
		return s.words[i]
	}
	return 0
}

// CPUs returns the CPUs in ascending order in a freshly allocated slice.
func (s Set) CPUs() []int {
	cpus := make([]int, 0, s.Len())
	for i, w := range s.words {
		for w != 0 {
			cpus = append(cpus, i*64+bits.TrailingZeros64(w))
			w &= w - 1
		}
	}
	return cpus
}

// Len returns the number of CPUs in s.
func (s Set) Len() int {
	n := 0
	for _, w := range s.words {
		n += bits.OnesCount64(w)
	}
	return n
}

// IsEmpty reports whether s has no CPUs.
func (s Set) IsEmpty() bool { return len(s.words) == 0 }

// Contains reports whether cpu is in s.
func (s Set) Contains(cpu int) bool {
	return cpu >= 0 && s.word(cpu/64)&(1<<(cpu%64)) != 0
}

// Max returns the highest CPU in s, or -1 if s is empty.
func (s Set) Max() int {
	if len(s.words) == 0 {
		return -1
	}
	last := len(s.words) - 1
	return last*64 + 63 - bits.LeadingZeros64(s.words[last])
}

// Union returns the CPUs in s or o.
func (s Set) Union(o Set) Set {
	w := make([]uint64, max(len(s.words), len(o.words)))
	for i := range w {
		w[i] = s.word(i) | o.word(i)
	}
	return fromWords(w)
}

// Intersect returns the CPUs in both s and o.
func (s Set) Intersect(o Set) Set {
	w := make([]uint64, min(len(s.words), len(o.words)))
	for i := range w {
		w[i] = s.words[i] & o.words[i]
	}
	return fromWords(w)
}

// Difference returns the CPUs in s but not in o.
func (s Set) Difference(o Set) Set {
	w := make([]uint64, len(s.words))
	for i := range w {
		w[i] = s.words[i] &^ o.word(i)
	}
	return fromWords(w)
}

// Equal reports whether s and o contain the same CPUs.
func (s Set) Equal(o Set) bool { return slices.Equal(s.words, o.words) }

// IsSubsetOf reports whether every CPU in s is also in o.
func (s Set) IsSubsetOf(o Set) bool {
	for i, w := range s.words {
		if w&^o.word(i) != 0 {
			return false
		}
	}
	return true
}

// String formats s like the kernel's %*pbl: "0-3,8-11", "5", "0-1", or ""
// for the empty set.
func (s Set) String() string {
	var b strings.Builder
	cpus := s.CPUs()
	for i := 0; i < len(cpus); {
		j := i // cpus[i..j] is a run of consecutive CPUs
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(cpus[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(cpus[j]))
		}
		i = j + 1
	}
	return b.String()
}

// Mask formats s like the kernel's %*pb for a bitmap of nrCPUs bits:
// lower-case hex, a comma every 32 bits counted from the least significant
// end, each group zero-padded, and the first group only as wide as the
// nrCPUs%32 bits it holds ("1,00000000" for CPU 32 of 36). The width is
// raised to s.Max()+1 (and at least 1) so that no CPU is lost.
func (s Set) Mask(nrCPUs int) string {
	n := max(nrCPUs, s.Max()+1, 1)
	groups := (n + 31) / 32
	topBits := n - (groups-1)*32
	b := make([]byte, 0, groups*9)
	for g := groups - 1; g >= 0; g-- {
		digits := 8
		if g == groups-1 {
			digits = (topBits + 3) / 4
		} else {
			b = append(b, ',')
		}
		v := uint32(s.word(g/2) >> (32 * (g % 2)))
		for k := digits - 1; k >= 0; k-- {
			b = append(b, "0123456789abcdef"[(v>>(4*k))&0xf])
		}
	}
	return string(b)
}

// MarshalJSON encodes s as a JSON array of CPU numbers; the empty set is [].
func (s Set) MarshalJSON() ([]byte, error) {
	b := []byte{'['}
	for i, c := range s.CPUs() {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(c), 10)
	}
	return append(b, ']'), nil
}
