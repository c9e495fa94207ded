package topology

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// ARPFile is the kernel's IPv4 neighbour table. IPv6 neighbours (NDP)
// have no procfs file: the kernel shows them only over netlink
// (RTM_GETNEIGH), so Neighbour finds IPv4 neighbours only.
const ARPFile = "/proc/net/arp"

// ErrNoNeighbour is returned when the neighbour table has no complete
// entry for the address.
var ErrNoNeighbour = errors.New("no neighbour entry")

// ARPEntry is one line of ARPFile.
type ARPEntry struct {
	IP     netip.Addr
	HWType uint32 // ARPHRD_* (1: Ethernet)
	Flags  uint32 // ATF_* (0x2 ATF_COM: complete; 0x4 ATF_PERM: static)
	MAC    net.HardwareAddr
	Device string
}

// Complete reports whether the entry holds a resolved hardware address:
// an entry still being resolved shows 00:00:00:00:00:00.
func (e ARPEntry) Complete() bool {
	for _, b := range e.MAC {
		if b != 0 {
			return true
		}
	}
	return false
}

// Neighbour is ip's hardware address in the host's neighbour table
// (ARPFile below r: the table of the network namespace r's /proc shows).
// It is an error wrapping ErrNoNeighbour when the table has no complete
// entry for ip, which is always so for an IPv6 address (see ARPFile).
func Neighbour(r Root, ip netip.Addr) (net.HardwareAddr, error) {
	if !ip.Is4() {
		return nil, fmt.Errorf("neighbour %s: %w (IPv6 neighbours are only in netlink, not in procfs)", ip, ErrNoNeighbour)
	}
	b, err := r.ReadFile(ARPFile)
	if err != nil {
		return nil, fmt.Errorf("neighbour %s: read %s: %w", ip, ARPFile, err)
	}
	entries, err := ParseARP(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("neighbour %s: %w", ip, err)
	}
	for _, e := range entries {
		if e.IP == ip && e.Complete() {
			return e.MAC, nil
		}
	}
	return nil, fmt.Errorf("neighbour %s: %w in %s", ip, ErrNoNeighbour, ARPFile)
}

// ParseARP reads a neighbour table in ARPFile's format: a header line,
// then "IP HWtype Flags HWaddress Mask Device" per entry. A line that does
// not parse (the header; too few fields; an address, number or MAC that
// is not one) is skipped; only a read error is an error.
func ParseARP(rd io.Reader) ([]ARPEntry, error) {
	var out []ARPEntry
	sc := bufio.NewScanner(rd)
	for sc.Scan() {
		if e, ok := parseARPLine(strings.Fields(sc.Text())); ok {
			out = append(out, e)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("parse %s: %w", ARPFile, err)
	}
	return out, nil
}

func parseARPLine(fs []string) (ARPEntry, bool) {
	if len(fs) < 4 {
		return ARPEntry{}, false
	}
	ip, err := netip.ParseAddr(fs[0])
	if err != nil {
		return ARPEntry{}, false
	}
	hw, err1 := strconv.ParseUint(fs[1], 0, 32)
	flags, err2 := strconv.ParseUint(fs[2], 0, 32)
	mac, err3 := net.ParseMAC(fs[3])
	if err1 != nil || err2 != nil || err3 != nil {
		return ARPEntry{}, false
	}
	e := ARPEntry{IP: ip, HWType: uint32(hw), Flags: uint32(flags), MAC: mac}
	if len(fs) >= 6 {
		e.Device = fs[5]
	}
	return e, true
}
