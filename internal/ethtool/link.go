package ethtool

// Values of struct ethtool_link_settings (and struct ethtool_cmd) that
// decodeLink names.
const (
	speedUnknown  = 0xffffffff // SPEED_UNKNOWN, (u32)-1
	duplexHalf    = 0x00
	duplexFull    = 0x01
	duplexUnknown = 0xff
)

// ports names the PORT_* values of the kernel's uapi ethtool.h.
var ports = map[uint8]string{0x00: "tp", 0x01: "aui", 0x02: "bnc", 0x03: "mii", 0x04: "fibre", 0x05: "da", 0xef: "none", 0xff: "other"}

// decodeLink names the link fields both ETHTOOL_GLINKSETTINGS and
// ETHTOOL_GSET carry.
func decodeLink(speed uint32, duplex, port, autoneg uint8) Link {
	l := Link{SpeedMbps: int64(speed), Autoneg: autoneg != 0, Port: ports[port]}
	if speed == speedUnknown {
		l.SpeedMbps = -1
	}
	switch duplex {
	case duplexHalf:
		l.Duplex = "half"
	case duplexFull:
		l.Duplex = "full"
	default:
		l.Duplex = "unknown"
	}
	return l
}
