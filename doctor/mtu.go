package doctor

import (
	"fmt"
	"strconv"
)

// Ethernet's framing around the MTU: a frame size (RFC 2544, with FCS) is
// the MTU's payload plus the 14-byte header and the 4-byte FCS. A VLAN tag
// would add 4 more; the run sends untagged frames.
const (
	ethHeaderBytes = 14
	ethFCSBytes    = 4
	// defaultFrame is what the MTU is checked against without a frame
	// size: the largest RFC 2544 frame.
	defaultFrame = 1518
)

const mtuWhy = "A frame larger than the MTU allows is not sent at all (pktgen and the userspace engines fail or the kernel drops it), " +
	"and a receiver drops it as oversized: the run would count every frame of that size lost."

// checkMTU: the interface's MTU against the frame size.
func checkMTU(e *env) Check {
	c := Check{Title: "MTU against the frame size", Why: mtuWhy}
	name := "/sys/class/net/" + e.o.Iface + "/mtu"
	s, err := e.read(name)
	if err != nil {
		c.Status = Warn
		c.Evidence = []string{unreadable(name, err)}
		return c
	}
	mtu, err := strconv.Atoi(s)
	if err != nil {
		c.Status = Warn
		c.Evidence = []string{fmt.Sprintf("%s: %q is not a number", name, s)}
		return c
	}
	frame, from := e.o.FrameSize, "--frame-size"
	if frame == 0 {
		frame, from = defaultFrame, "no --frame-size: the largest RFC 2544 frame"
	}
	need := frame - ethHeaderBytes - ethFCSBytes
	c.Evidence = []string{
		fmt.Sprintf("%s: %d", name, mtu),
		fmt.Sprintf("frame %d B (%s) = %d B payload + %d B Ethernet header + %d B FCS", frame, from, need, ethHeaderBytes, ethFCSBytes),
	}
	if need <= mtu {
		c.Status = Pass
		return c
	}
	c.Status = Fail
	c.Evidence = append([]string{fmt.Sprintf("%s: %d, below the %d B payload a %d B frame carries", name, mtu, need, frame)}, c.Evidence...)
	c.Fix = fmt.Sprintf("ip link set dev %s mtu %d (on every host and switch port of the path), or run with --frame-size %d or less", e.o.Iface, need, mtu+ethHeaderBytes+ethFCSBytes)
	return c
}
