package ethtool

import "bytes"

// gstringLen is ETH_GSTRING_LEN: each name of a string set is a
// NUL-padded field of this many bytes.
const gstringLen = 32

// decodeStrings splits the data of struct ethtool_gstrings into n names
// (fewer when raw is short).
func decodeStrings(raw []byte, n int) []string {
	n = min(n, len(raw)/gstringLen)
	out := make([]string, n)
	for i := range out {
		b := raw[i*gstringLen : (i+1)*gstringLen]
		if j := bytes.IndexByte(b, 0); j >= 0 {
			b = b[:j]
		}
		out[i] = string(b)
	}
	return out
}

// foldStats pairs names with values; a name listed twice (a driver
// repeating one for two queues) counts both values.
func foldStats(names []string, vals []uint64) map[string]uint64 {
	out := make(map[string]uint64, len(names))
	for i, name := range names[:min(len(names), len(vals))] {
		out[name] += vals[i]
	}
	return out
}

// decodeFeatures pairs the names of ETH_SS_FEATURES with their bits in
// the blocks of ETHTOOL_GFEATURES (four words per 32 features: available,
// requested, active, never changed). A feature is fixed, as `ethtool -k`
// says "[fixed]", when the driver cannot change it or the kernel never
// lets it change.
func decodeFeatures(names []string, blocks []uint32) []Feature {
	out := make([]Feature, 0, len(names))
	for i, name := range names {
		w := 4 * (i / 32)
		if w+3 >= len(blocks) {
			break
		}
		bit := uint32(1) << (i % 32)
		if name == "" {
			continue
		}
		f := Feature{Name: name, Available: blocks[w]&bit != 0, Requested: blocks[w+1]&bit != 0, Active: blocks[w+2]&bit != 0}
		f.Fixed = !f.Available || blocks[w+3]&bit != 0
		out = append(out, f)
	}
	return out
}
