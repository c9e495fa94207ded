package live

// Synced is the kernel's own verdict on adjtimex's answer: the state is
// not TIME_ERROR and STA_UNSYNC is clear.
func Synced(state, status int32) bool {
	const timeError, staUnsync = 5, 0x40
	return state != timeError && status&staUnsync == 0
}
