package ethtool

import "fmt"

// Pause is an interface's Ethernet flow control (ETHTOOL_GPAUSEPARAM,
// `ethtool -a`).
type Pause struct {
	Autoneg bool `json:"autoneg"`
	RX      bool `json:"rx"`
	TX      bool `json:"tx"`
}

// Coalesce is an interface's interrupt coalescing (ETHTOOL_GCOALESCE,
// `ethtool -c`): every field of struct ethtool_coalesce, so that a
// restore writes back exactly what was read.
type Coalesce struct {
	RXUsecs            uint32 `json:"rx_usecs"`
	RXMaxFrames        uint32 `json:"rx_max_frames"`
	RXUsecsIRQ         uint32 `json:"rx_usecs_irq"`
	RXMaxFramesIRQ     uint32 `json:"rx_max_frames_irq"`
	TXUsecs            uint32 `json:"tx_usecs"`
	TXMaxFrames        uint32 `json:"tx_max_frames"`
	TXUsecsIRQ         uint32 `json:"tx_usecs_irq"`
	TXMaxFramesIRQ     uint32 `json:"tx_max_frames_irq"`
	StatsBlockUsecs    uint32 `json:"stats_block_usecs"`
	UseAdaptiveRX      bool   `json:"use_adaptive_rx"`
	UseAdaptiveTX      bool   `json:"use_adaptive_tx"`
	PktRateLow         uint32 `json:"pkt_rate_low"`
	RXUsecsLow         uint32 `json:"rx_usecs_low"`
	RXMaxFramesLow     uint32 `json:"rx_max_frames_low"`
	TXUsecsLow         uint32 `json:"tx_usecs_low"`
	TXMaxFramesLow     uint32 `json:"tx_max_frames_low"`
	PktRateHigh        uint32 `json:"pkt_rate_high"`
	RXUsecsHigh        uint32 `json:"rx_usecs_high"`
	RXMaxFramesHigh    uint32 `json:"rx_max_frames_high"`
	TXUsecsHigh        uint32 `json:"tx_usecs_high"`
	TXMaxFramesHigh    uint32 `json:"tx_max_frames_high"`
	RateSampleInterval uint32 `json:"rate_sample_interval"`
}

// Rings are an interface's ring sizes and their maximums
// (ETHTOOL_GRINGPARAM, `ethtool -g`).
type Rings struct {
	RX         uint32 `json:"rx"`
	RXMini     uint32 `json:"rx_mini"`
	RXJumbo    uint32 `json:"rx_jumbo"`
	TX         uint32 `json:"tx"`
	RXMax      uint32 `json:"rx_max"`
	RXMiniMax  uint32 `json:"rx_mini_max"`
	RXJumboMax uint32 `json:"rx_jumbo_max"`
	TXMax      uint32 `json:"tx_max"`
}

// Feature is one offload of `ethtool -k` (ETHTOOL_GFEATURES with the
// ETH_SS_FEATURES names): "rx-gro", "tx-tcp-segmentation", ...
type Feature struct {
	Name      string `json:"name"`
	Available bool   `json:"available"` // the driver can change it
	Requested bool   `json:"requested"`
	Active    bool   `json:"active"`
	Fixed     bool   `json:"fixed"` // never changeable (not available)
}

// Link is an interface's link settings (ETHTOOL_GLINKSETTINGS, `ethtool
// IF`'s speed, duplex and auto-negotiation).
type Link struct {
	SpeedMbps int64  `json:"speed_mbps"` // -1 unknown
	Duplex    string `json:"duplex"`     // "full", "half", "unknown"
	Autoneg   bool   `json:"autoneg"`
	Port      string `json:"port,omitempty"` // "tp", "fibre", "da", "other", ...
}

// String is the pause parameters as `ethtool -A` takes them.
func (p Pause) String() string {
	return fmt.Sprintf("autoneg %s rx %s tx %s", onOff(p.Autoneg), onOff(p.RX), onOff(p.TX))
}

// coalesceWords is how many fields struct ethtool_coalesce has after cmd.
const coalesceWords = 22

// words are c's fields in the order of struct ethtool_coalesce.
func (c Coalesce) words() [coalesceWords]uint32 {
	return [coalesceWords]uint32{
		c.RXUsecs, c.RXMaxFrames, c.RXUsecsIRQ, c.RXMaxFramesIRQ,
		c.TXUsecs, c.TXMaxFrames, c.TXUsecsIRQ, c.TXMaxFramesIRQ,
		c.StatsBlockUsecs, b2u(c.UseAdaptiveRX), b2u(c.UseAdaptiveTX),
		c.PktRateLow, c.RXUsecsLow, c.RXMaxFramesLow, c.TXUsecsLow, c.TXMaxFramesLow,
		c.PktRateHigh, c.RXUsecsHigh, c.RXMaxFramesHigh, c.TXUsecsHigh, c.TXMaxFramesHigh,
		c.RateSampleInterval,
	}
}

// coalesceFromWords is the inverse of words. The kernel's adaptive
// fields are u32 that every driver sets to 0 or 1 (netlink reports them
// as a flag), so a bool keeps them exactly.
func coalesceFromWords(w [coalesceWords]uint32) Coalesce {
	return Coalesce{
		RXUsecs: w[0], RXMaxFrames: w[1], RXUsecsIRQ: w[2], RXMaxFramesIRQ: w[3],
		TXUsecs: w[4], TXMaxFrames: w[5], TXUsecsIRQ: w[6], TXMaxFramesIRQ: w[7],
		StatsBlockUsecs: w[8], UseAdaptiveRX: w[9] != 0, UseAdaptiveTX: w[10] != 0,
		PktRateLow: w[11], RXUsecsLow: w[12], RXMaxFramesLow: w[13], TXUsecsLow: w[14], TXMaxFramesLow: w[15],
		PktRateHigh: w[16], RXUsecsHigh: w[17], RXMaxFramesHigh: w[18], TXUsecsHigh: w[19], TXMaxFramesHigh: w[20],
		RateSampleInterval: w[21],
	}
}

// String is the coalescing settings a benchmark depends on, as `ethtool
// -C` names them (the _irq, _low and _high variants apply only with
// adaptive coalescing or on a few old drivers, and are left out).
func (c Coalesce) String() string {
	return fmt.Sprintf("adaptive-rx %s adaptive-tx %s rx-usecs %d rx-frames %d tx-usecs %d tx-frames %d",
		onOff(c.UseAdaptiveRX), onOff(c.UseAdaptiveTX), c.RXUsecs, c.RXMaxFrames, c.TXUsecs, c.TXMaxFrames)
}

// String is the ring sizes against their maximums: "rx 256/4096 tx
// 256/4096" (the mini and jumbo rings only when the driver has them).
func (g Rings) String() string {
	s := fmt.Sprintf("rx %d/%d", g.RX, g.RXMax)
	if g.RXMiniMax > 0 {
		s += fmt.Sprintf(" rx-mini %d/%d", g.RXMini, g.RXMiniMax)
	}
	if g.RXJumboMax > 0 {
		s += fmt.Sprintf(" rx-jumbo %d/%d", g.RXJumbo, g.RXJumboMax)
	}
	return s + fmt.Sprintf(" tx %d/%d", g.TX, g.TXMax)
}

// String is the link as `ethtool IF` says it: "10000Mb/s full autoneg off".
func (l Link) String() string {
	speed := "unknown speed"
	if l.SpeedMbps > 0 {
		speed = fmt.Sprintf("%dMb/s", l.SpeedMbps)
	}
	s := fmt.Sprintf("%s %s duplex autoneg %s", speed, l.Duplex, onOff(l.Autoneg))
	if l.Port != "" {
		s += " port " + l.Port
	}
	return s
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}
