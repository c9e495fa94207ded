//go:build linux

package ethtool

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ethSSFeatures is ETH_SS_FEATURES: the string set naming the bits of
// ETHTOOL_GFEATURES.
const ethSSFeatures = 4

// ssetInfo is struct ethtool_sset_info asking for one set: its count
// comes back in data when the set's bit is still in the mask.
type ssetInfo struct {
	cmd, _ uint32
	mask   uint64
	data   uint32
	_      uint32
}

// Features are the interface's offloads (`ethtool -k`): the names of
// ETH_SS_FEATURES (counted with ETHTOOL_GSSET_INFO) and, bit by bit, the
// available, requested, active and never-changed words of
// ETHTOOL_GFEATURES.
func (r *Reader) Features() ([]Feature, error) {
	info := ssetInfo{cmd: unix.ETHTOOL_GSSET_INFO, mask: 1 << ethSSFeatures}
	if err := r.ioctl(unsafe.Pointer(&info)); err != nil {
		return nil, fmt.Errorf("ethtool feature count of %s: %w", r.name, err)
	}
	if info.mask&(1<<ethSSFeatures) == 0 {
		return nil, fmt.Errorf("ethtool feature count of %s: %w (no ETH_SS_FEATURES string set)", r.name, ErrNotSupported)
	}
	n := int(info.data)
	names, err := r.strings(ethSSFeatures, n)
	if err != nil {
		return nil, fmt.Errorf("ethtool feature names of %s: %w", r.name, err)
	}
	// struct ethtool_gfeatures { u32 cmd, size; struct { u32 available,
	// requested, active, never_changed } features[size] }
	words := (n + 31) / 32
	buf := make([]uint32, 2+4*words)
	buf[0], buf[1] = unix.ETHTOOL_GFEATURES, uint32(words)
	if err := r.ioctl(unsafe.Pointer(&buf[0])); err != nil {
		return nil, fmt.Errorf("ethtool features of %s: %w", r.name, err)
	}
	return decodeFeatures(names, buf[2:2+4*min(words, int(buf[1]))]), nil
}

// strings reads the n names of a string set (ETHTOOL_GSTRINGS).
func (r *Reader) strings(set uint32, n int) ([]string, error) {
	// struct ethtool_gstrings { u32 cmd, string_set, len; u8 data[len*32] }
	buf := make([]uint32, 3+n*gstringLen/4)
	buf[0], buf[1], buf[2] = unix.ETHTOOL_GSTRINGS, set, uint32(n)
	if err := r.ioctl(unsafe.Pointer(&buf[0])); err != nil {
		return nil, err
	}
	if int(buf[2]) != n {
		return nil, fmt.Errorf("%d names of string set %d, counted %d", buf[2], set, n)
	}
	if n == 0 {
		return nil, nil
	}
	return decodeStrings(unsafe.Slice((*byte)(unsafe.Pointer(&buf[3])), n*gstringLen), n), nil
}
