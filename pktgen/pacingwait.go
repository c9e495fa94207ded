package pktgen

// PacingWaitUSec is how long the device's thread waited out its pacing
// gaps, in µs: its Result's idle time, at most one gap (Params' delay,
// ns) per packet sent. pktgen builds a frame, stamps it and then waits
// (net/core/pktgen.c: fill_packet, then spin), and adds each wait to its
// idle time; the idle time also takes in the rare yields of the CPU
// between frames, which the cap keeps from reading as more than a gap
// per frame. 0 unpaced (delay 0) or before a result.
func (df *DeviceFile) PacingWaitUSec() uint64 {
	delay, ok := df.Params["delay"]
	if !ok || delay.Kind != ParamNumber || delay.Number <= 0 || df.Result.State != StateOK {
		return 0
	}
	return min(df.Result.IdleUSec, df.Result.Packets*uint64(delay.Number)/1000)
}
