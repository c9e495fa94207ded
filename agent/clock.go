package agent

// clockInfo is the host's wall clock as the kernel disciplines it
// (adjtimex, read only) and the kernel's boot id: agents with one boot id
// read one clock.
type clockInfo struct {
	synchronised           bool
	estErrorUS, maxErrorUS int64
	state, status          int32
	bootID                 string
	err                    error // why adjtimex could not be read
}

// clockReader reads the host's clock discipline (readHostClock; tests
// replace it).
type clockReader func() clockInfo

// synced is the kernel's own verdict on adjtimex's answer: the state is
// not TIME_ERROR and STA_UNSYNC is clear.
func synced(state, status int32) bool {
	const timeError, staUnsync = 5, 0x40
	return state != timeError && status&staUnsync == 0
}
