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
