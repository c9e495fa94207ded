package ethtool

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
