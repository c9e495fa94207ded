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
