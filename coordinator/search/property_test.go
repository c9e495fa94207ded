package search

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// knownDevice is a device with a PDR knee whose truths are known: no loss
// up to t1·max, 0.2 % up to t2·max, then the excess; res is the relative
// resolution.
type knownDevice struct{ t1, t2, res float64 }

// checkKnown runs both searches on the device and checks every property:
// each goal within the resolution of its truth, NDR ≤ PDR, every trial
// recorded, final bounds set by final trials, and the trial counts.
// It returns the trial counts (RFC 2544, NDR/PDR, NDR/PDR final).
func checkKnown(t *testing.T, k knownDevice) (rfc, multi, final int) {
	t.Helper()
	const max = lineRate64
	o := Options{MaxPPS: max, Duration: 30 * time.Second, RelativeResolution: k.res}
	loss := knee(k.t1*max, k.t2*max)
	ndr, pdr := k.t1*max, k.t2*max/(1-(PDRGoal-0.002))

	dv := &device{loss: loss}
	r, err := RFC2544(context.Background(), o, dv.trial)
	if err != nil {
		t.Fatal(err)
	}
	checkRecorded(t, r, dv)
	checkTruth(t, r, r.Goals[0], ndr)
	if n, bound := r.TrialCount, binaryBound(r); n > bound {
		t.Errorf("rfc2544: %d trials: more than %d", n, bound)
	}
	rfc = r.TrialCount

	dv = &device{loss: loss}
	r, err = NDRPDR(context.Background(), o, dv.trial)
	if err != nil {
		t.Fatal(err)
	}
	checkRecorded(t, r, dv)
	checkMulti(t, r, o)
	checkTruth(t, r, r.Goals[0], ndr)
	checkTruth(t, r, r.Goals[1], pdr)
	if n, bound := r.TrialCount, ndrpdrBound(r); n > bound {
		t.Errorf("ndr-pdr: %d trials: more than %d", n, bound)
	}
	// The device does not depend on the duration: the final trials only
	// confirm the bounds the short ones found, two per goal at most.
	if n := countFinal(r); n > 2*len(r.Goals) {
		t.Errorf("ndr-pdr: %d final trials, want at most %d", n, 2*len(r.Goals))
	}
	if t.Failed() {
		t.Logf("device %+v", k)
	}
	return rfc, r.TrialCount, countFinal(r)
}

// TestProperties runs both searches on many random devices and resolutions.
func TestProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var most [3]int
	var sum [3]float64
	const n = 500
	for range n {
		t1 := 0.011 + rng.Float64()*1.1 // up to above the line rate
		k := knownDevice{t1: t1, t2: t1 + rng.Float64()*0.3, res: 0.001 + rng.Float64()*0.049}
		if rng.IntN(4) == 0 {
			k.t2 = t1 // no knee
		}
		c := [3]int{}
		c[0], c[1], c[2] = checkKnown(t, k)
		for i := range c {
			most[i] = max(most[i], c[i])
			sum[i] += float64(c[i])
		}
		if t.Failed() {
			return
		}
	}
	t.Logf("%d devices: rfc2544 trials mean %.1f max %d; ndr-pdr trials mean %.1f max %d, final mean %.1f max %d",
		n, sum[0]/n, most[0], sum[1]/n, most[1], sum[2]/n, most[2])
}

func FuzzSearch(f *testing.F) {
	f.Add(0.5, 0.2, 0.01)
	f.Add(0.011, 0.0, 0.001)
	f.Add(1.5, 0.0, 0.05)
	f.Add(0.999, 0.05, 0.005)
	f.Fuzz(func(t *testing.T, t1, gap, res float64) {
		if math.IsNaN(t1+gap+res) || t1 < 0.011 || t1 > 2 || gap < 0 || gap > 1 || res < 0.0005 || res > 0.2 {
			t.Skip()
		}
		checkKnown(t, knownDevice{t1: t1, t2: t1 + gap, res: res})
	})
}

// TestPropertiesOtherDevices runs the searches on random noisy devices,
// generator-limited ones and duration-dependent ones.
func TestPropertiesOtherDevices(t *testing.T) {
	const line, n = lineRate64, 2000
	rng := rand.New(rand.NewPCG(9, 10))
	random := func() (rate, res float64) {
		return (0.02 + rng.Float64()) * line, 0.0005 + rng.Float64()*0.05
	}
	t.Run("noisy", func(t *testing.T) {
		for range n {
			T, res := random()
			amp := rng.Float64() * 0.004
			for _, s := range searches {
				o := Options{MaxPPS: line, Duration: 30 * time.Second, RelativeResolution: res}
				dv := &device{loss: noisy(cliff(T), amp, rng)}
				r, err := s.fn(context.Background(), o, dv.trial)
				if err != nil {
					t.Fatal(err)
				}
				checkRecorded(t, r, dv)
				checkTruth(t, r, r.Goals[0], T)
				if s.name == "ndr-pdr" {
					checkMulti(t, r, o)
					checkTruthRange(t, r, r.Goals[1], T/(1-(PDRGoal-amp)), T/(1-PDRGoal))
					if r.TrialCount > ndrpdrBound(r) {
						t.Errorf("%d trials: more than %d", r.TrialCount, ndrpdrBound(r))
					}
				} else if r.TrialCount > binaryBound(r) {
					t.Errorf("%d trials: more than %d", r.TrialCount, binaryBound(r))
				}
				if t.Failed() {
					t.Fatalf("%s: T %.4f, noise %.4f, res %.4f", s.name, T/line, amp, res)
				}
			}
		}
	})
	t.Run("generator-limited", func(t *testing.T) {
		for range n {
			T, res := random()
			G := (0.02 + rng.Float64()) * line
			shortfall := 1 - rng.Float64()*0.01
			// What the search can know the generator reaches: what it
			// reports when it falls short.
			reach := G * shortfall
			for _, s := range searches {
				o := Options{MaxPPS: line, Duration: 30 * time.Second, RelativeResolution: res}
				dv := &device{loss: cliff(T), gen: G, shortfall: shortfall}
				r, err := s.fn(context.Background(), o, dv.trial)
				if err != nil {
					t.Fatal(err)
				}
				checkRecorded(t, r, dv)
				for _, g := range r.Goals[:1] { // NDR: the cliff's PDR is within the resolution of it
					if g.GeneratorLimited {
						checkTruthRange(t, r, g, min(T, reach), min(T, G))
					} else {
						checkTruth(t, r, g, T)
					}
					switch {
					case reach < T-r.ResolutionPPS && G < line && !g.GeneratorLimited:
						t.Error("not flagged generator-limited, yet the generator falls short of the device")
					case (reach > T+r.ResolutionPPS || G >= line) && g.GeneratorLimited:
						t.Error("flagged generator-limited, yet the generator reaches past the device")
					}
				}
				if r.TrialCount > ndrpdrBound(r) {
					t.Errorf("%d trials: more than %d", r.TrialCount, ndrpdrBound(r))
				}
				if t.Failed() {
					t.Fatalf("%s: T %.4f, G %.4f, shortfall %.4f, res %.4f", s.name, T/line, G/line, shortfall, res)
				}
			}
		}
	})
	t.Run("short trials see more", func(t *testing.T) {
		most := 0
		for range n {
			T, res := random()
			buffer := rng.Float64() * 0.3 * line
			o := Options{MaxPPS: line, Duration: 30 * time.Second, RelativeResolution: res}
			dv := &device{loss: buffered(T, buffer)}
			r, err := NDRPDR(context.Background(), o, dv.trial)
			if err != nil {
				t.Fatal(err)
			}
			checkRecorded(t, r, dv)
			checkMulti(t, r, o)
			final := T + buffer/o.Duration.Seconds()
			checkTruth(t, r, r.Goals[0], final)
			checkTruth(t, r, r.Goals[1], final/(1-PDRGoal))
			if r.TrialCount > ndrpdrBound(r) {
				t.Errorf("%d trials: more than %d", r.TrialCount, ndrpdrBound(r))
			}
			most = max(most, countFinal(r))
			if t.Failed() {
				t.Fatalf("T %.4f, buffer %.4f, res %.4f", T/line, buffer/line, res)
			}
		}
		t.Logf("at most %d final trials", most)
	})
}
