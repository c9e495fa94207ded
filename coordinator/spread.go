package coordinator

import (
	"math"
	"slices"
	"time"
)

// What a spread's clocks are worth (Spread.Clocks).
const (
	// ClocksOne: every time was read on one clock (one host, or agents in
	// namespaces of one kernel: one boot id). The spread is exact.
	ClocksOne = "one clock"
	// ClocksSynced: several hosts, each clock disciplined by its time
	// daemon (adjtimex: synchronised); ClockErrorUS is the worst
	// estimated error of one of them.
	ClocksSynced = "synchronised clocks"
	// ClocksEstimated: several hosts whose clocks are not synchronised,
	// each measured against the coordinator's (Host.ClockOffset): the
	// times are corrected by those offsets, and ClockErrorUS bounds the
	// correction of any two of them.
	ClocksEstimated = "clocks corrected by measured offsets"
	// ClocksUnsynced: several hosts, some clock not disciplined or not
	// known: the spread includes the clocks' offsets.
	ClocksUnsynced = "unsynchronised clocks"
)

// Clock is a host's wall clock as its kernel disciplines it (adjtimex,
// read when the agent was described).
type Clock struct {
	Synchronised bool  `json:"synchronised"`
	EstErrorUS   int64 `json:"est_error_us"` // the kernel's estimated error
	MaxErrorUS   int64 `json:"max_error_us"` // the kernel's maximum error
	// BootID is the kernel's boot id: hosts with one read one clock.
	BootID string `json:"boot_id,omitempty"`
	Error  string `json:"error,omitempty"` // why the clock could not be read
}

// StartSpread is how close together the run's streams began, measured at
// the traffic: the first frame of each stream on its sender's clock, and
// its first arrival on its receiver's clock.
type StartSpread struct {
	FirstFrame   *Spread `json:"first_frame,omitempty"`
	FirstArrival *Spread `json:"first_arrival,omitempty"`
}

// Spread is one set of per-stream times: each stream's offset from the
// earliest of them, µs (MaxUS is the last minus the first).
type Spread struct {
	Streams int     `json:"streams"`           // streams with a time
	Missing int     `json:"missing,omitempty"` // streams without one (not sent, not arrived, or not reported)
	P50US   float64 `json:"p50_us"`
	P99US   float64 `json:"p99_us"`
	MaxUS   float64 `json:"max_us"`
	// Clocks says what the figures are worth (ClocksOne, ClocksSynced,
	// ClocksUnsynced) over the hosts whose times they are; ClockErrorUS
	// is, for ClocksSynced, the largest estimated error of one of them.
	Clocks       string   `json:"clocks"`
	ClockErrorUS int64    `json:"clock_error_us,omitempty"`
	Hosts        []string `json:"hosts"`
}

// startSpreadOf measures the first-frame and first-arrival spreads of
// the flows' streams, each labelled by the clocks of the hosts it read
// (clocks: by host name; a host without one counts as unsynchronised);
// times of hosts whose clocks are unrelated but measured (offsets: by
// host name, before and after the traffic) are corrected by their
// offsets.
func startSpreadOf(flows []Flow, clocks map[string]*Clock, offsets map[string][2]*Offset) *StartSpread {
	var frames, arrivals []hostTime
	var frameMissing, arrivalMissing int
	senders, receivers := map[string]bool{}, map[string]bool{}
	for _, f := range flows {
		for _, s := range f.StreamDetail {
			if s.FirstFrameNs > 0 {
				frames = append(frames, hostTime{f.Sender, s.FirstFrameNs})
				senders[f.Sender] = true
			} else if s.Sent > 0 {
				frameMissing++
			}
			if s.FirstArrivalNs > 0 {
				arrivals = append(arrivals, hostTime{f.Receiver, s.FirstArrivalNs})
				receivers[f.Receiver] = true
			} else if s.Sent > 0 {
				arrivalMissing++
			}
		}
	}
	sp := &StartSpread{FirstFrame: spreadOf(frames, frameMissing, senders, clocks, offsets), FirstArrival: spreadOf(arrivals, arrivalMissing, receivers, clocks, offsets)}
	if sp.FirstFrame == nil && sp.FirstArrival == nil {
		return nil
	}
	return sp
}

// hostTime is a time (Unix ns) read on a host's clock.
type hostTime struct {
	host string
	ns   uint64
}

// spreadOf is the spread of times read on hosts (nil: no times, and none
// missing either).
func spreadOf(hts []hostTime, missing int, hosts map[string]bool, clocks map[string]*Clock, offsets map[string][2]*Offset) *Spread {
	if len(hts) == 0 && missing == 0 {
		return nil
	}
	s := &Spread{Streams: len(hts), Missing: missing, Hosts: []string{}}
	for h := range hosts {
		s.Hosts = append(s.Hosts, h)
	}
	slices.Sort(s.Hosts)
	s.Clocks, s.ClockErrorUS = clocksOf(s.Hosts, clocks)
	times := make([]uint64, len(hts))
	for i, ht := range hts {
		times[i] = ht.ns
	}
	if s.Clocks == ClocksUnsynced {
		if corrected, errUS, ok := correctedTimes(hts, s.Hosts, offsets); ok {
			times, s.Clocks, s.ClockErrorUS = corrected, ClocksEstimated, errUS
		}
	}
	if len(times) > 0 {
		first := uint64(math.MaxUint64)
		for _, t := range times {
			first = min(first, t)
		}
		offs := make([]float64, len(times))
		for i, t := range times {
			offs[i] = float64(t-first) / 1e3
		}
		s.P50US, s.P99US, s.MaxUS = percentile(offs, 50), percentile(offs, 99), percentile(offs, 100)
	}
	return s
}

// correctedTimes are the times on the coordinator's clock: each less its
// host's offset (ok false: a host was not measured). The error bounds
// the difference of any two: twice the worst host's bound and drift.
func correctedTimes(hts []hostTime, hosts []string, offsets map[string][2]*Offset) (times []uint64, errUS int64, ok bool) {
	var worst time.Duration
	for _, h := range hosts {
		o := offsets[h]
		if o[0] == nil {
			return nil, 0, false
		}
		b := o[0].Bound()
		if o[1] != nil {
			b += max(o[1].Offset-o[0].Offset, o[0].Offset-o[1].Offset)
		}
		worst = max(worst, b)
	}
	times = make([]uint64, len(hts))
	for i, ht := range hts {
		times[i] = uint64(int64(ht.ns) - int64(offsets[ht.host][0].Offset))
	}
	return times, int64(2 * worst / time.Microsecond), true
}

// clocksOf labels times read on hosts: one clock (one host, or one boot
// id), every clock synchronised (and the worst estimated error), or not.
func clocksOf(hosts []string, clocks map[string]*Clock) (label string, errUS int64) {
	if len(hosts) <= 1 {
		return ClocksOne, 0
	}
	boot := ""
	oneBoot, synced := true, true
	for i, h := range hosts {
		c := clocks[h]
		if c == nil {
			oneBoot, synced = false, false
			continue
		}
		// The boot id is read apart from adjtimex: one kernel is one
		// clock even when its discipline could not be read (as the
		// senders' CPU placement takes it).
		if i == 0 {
			boot = c.BootID
		}
		oneBoot = oneBoot && c.BootID != "" && c.BootID == boot
		if c.Error != "" {
			synced = false
			continue
		}
		synced = synced && c.Synchronised
		errUS = max(errUS, c.EstErrorUS)
	}
	switch {
	case oneBoot:
		return ClocksOne, 0
	case synced:
		return ClocksSynced, errUS
	}
	return ClocksUnsynced, 0
}
