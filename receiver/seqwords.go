package receiver

import "math/bits"

// A stream's sequence state is an array of 64-bit words, the same in Go
// (the AF_PACKET method) and in the XDP program's BPF_F_MMAPABLE array:
//
//   - Repeats == 1: one bit per sequence, sequence s at bit s&63 of word
//     s>>6 (bit 0 of word 0, sequence 0, is never set: sequences start
//     at 1). Memory: 1 bit per sequence.
//   - Repeats > 1: a 16-bit copy counter per sequence, sequence s in lane
//     s&3 (bits 16*(s&3) and up) of word s>>2, saturating at Repeats.
//     Memory: 16 bits per sequence.
//
// Missing sequences and ranges are computed from the bitmap form by
// missingRanges, for both methods.

// seenBitmap returns the state as a bitmap of seen sequences: words
// itself when repeats == 1, else a bitmap with sequence s set when its
// copy counter is not zero.
func seenBitmap(words []uint64, repeats int) []uint64 {
	if repeats <= 1 {
		return words
	}
	out := make([]uint64, (uint64(len(words))*4+63)/64)
	for i, w := range words {
		if w == 0 {
			continue
		}
		for lane := uint64(0); lane < 4; lane++ {
			if w>>(16*lane)&0xffff != 0 {
				s := uint64(i)*4 + lane
				out[s>>6] |= 1 << (s & 63)
			}
		}
	}
	return out
}

// missingRanges counts the sequences in [1, maxSeq] whose bit is not set
// in bitmap (words past its end count as all missing) and lists the first
// limit runs of them as inclusive [from, to] ranges, in order. ranges is
// never nil.
func missingRanges(bitmap []uint64, maxSeq uint64, limit int) (missing uint64, ranges [][2]uint32) {
	ranges = [][2]uint32{}
	if maxSeq == 0 {
		return 0, ranges
	}
	open := false
	var start uint64
	closeAt := func(end uint64) {
		if len(ranges) < limit {
			ranges = append(ranges, [2]uint32{uint32(start), uint32(end)})
		}
		open = false
	}
	last := maxSeq >> 6
	for wi := uint64(0); wi <= last; wi++ {
		var w uint64
		if wi < uint64(len(bitmap)) {
			w = bitmap[wi]
		}
		lo, hi := uint64(0), uint64(63)
		if wi == 0 {
			lo = 1
		}
		if wi == last {
			hi = maxSeq & 63
		}
		valid := (^uint64(0) >> (63 - hi)) &^ (1<<lo - 1)
		z := ^w & valid // missing sequences in this word
		missing += uint64(bits.OnesCount64(z))
		if len(ranges) >= limit && !open {
			continue // only counting now
		}
		base := wi << 6
		switch z {
		case valid: // all missing
			if !open {
				open, start = true, base+lo
			}
		case 0: // none missing
			if open {
				closeAt(base + lo - 1)
			}
		default:
			for b := lo; b <= hi; b++ {
				gone := z>>b&1 == 1
				if gone && !open {
					open, start = true, base+b
				} else if !gone && open {
					closeAt(base + b - 1)
				}
			}
		}
	}
	if open {
		closeAt(maxSeq)
	}
	return missing, ranges
}

// mergeWords adds src's sequence state into dst (grown as needed) and
// returns dst and the packets that became duplicates: a sequence seen by
// both (bitmaps), or copies beyond repeats in all (counters).
func mergeWords(dst, src []uint64, repeats int) ([]uint64, uint64) {
	if len(src) > len(dst) {
		dst = append(dst, make([]uint64, len(src)-len(dst))...)
	}
	var dups uint64
	if repeats <= 1 {
		for i, w := range src {
			dups += uint64(bits.OnesCount64(dst[i] & w))
			dst[i] |= w
		}
		return dst, dups
	}
	r := uint64(repeats)
	for i, w := range src {
		if w == 0 {
			continue
		}
		var out uint64
		for lane := uint64(0); lane < 4; lane++ {
			sh := 16 * lane
			c := dst[i]>>sh&0xffff + w>>sh&0xffff
			if c > r {
				dups += c - r
				c = r
			}
			out |= c << sh
		}
		dst[i] = out
	}
	return dst, dups
}
