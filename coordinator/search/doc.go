// Package search finds, for one frame size, the highest offered rate a
// device under test carries within a loss-ratio goal. It holds the search
// algorithms only: no I/O, no clock, no goroutines. The caller (the
// campaign runner) passes a TrialFunc that performs one real trial at a
// per-flow rate for a duration and reports what it measured; the search
// decides which trials to run and what they mean.
//
// Two searches:
//
//   - RFC2544: the RFC 2544 §26.1 throughput, by binary search, every
//     trial of the full duration.
//   - NDRPDR: several goals at once (default NDR, loss 0, and PDR, loss
//     ≤ 0.5 %), in the manner of MLRsearch (RFC 9971): short trials narrow
//     the bounds of every goal, full-duration trials confirm them.
//
// And one of another kind: BackToBack, RFC 2544 §26.4's back-to-back
// frames, the longest burst at the maximum rate with no loss, searched
// by burst length over a BurstFunc (see its documentation).
//
// Both rate searches return a Result: per goal the rate found (the lower bound: the
// highest rate whose trial met the goal), the upper bound (the lowest rate
// above it whose trial missed the goal), the trials that set them, every
// trial in the order run, and notes.
//
// # Rates, resolution, limits
//
// Rates are per flow, in packets per second. MaxPPS is the theoretical
// line rate for the frame size (the caller computes it: a frame of s bytes
// counted with its FCS, as RFC 2544 counts it, takes s + 20 bytes on the
// wire with preamble and gap); MinPPS defaults to 1 % of it. A search
// stops when upper − lower bound ≤ the resolution: Resolution pps, or
// RelativeResolution × MaxPPS (default 1 %). MaxTrials bounds the trials,
// retries included (default 30 for RFC2544, 60 for NDRPDR); reaching it
// returns the best so far with an error wrapping ErrTrialLimit. The
// context is checked before every trial and passed to the TrialFunc: a
// cancel stops the search before the next trial, with the context's error.
// On any error after the options were accepted, the Result is still
// returned, with every trial made and Complete false.
//
// # Invalid trials
//
// A trial is valid when it ran and the senders reached the offered rate.
// Only valid trials count, as passing (loss ratio ≤ goal) or failing.
//
// Generator-limited (Outcome.GeneratorLimited: the senders could not offer
// the rate) is never loss: the trial says nothing about the device. It is
// run again once, same rate and duration (Trial.Retry): a generator on a
// busy or virtual host stalls now and then, and one short trial must not
// cap the search. A second short trial in a row says the generator
// cannot offer that rate, so the search lowers its
// ceiling, the highest rate it will still offer, to what the senders
// reached, and at least one resolution step below the rate tried (so that
// a generator that keeps falling a little short cannot hold the search at
// one rate). The next trial is then at the ceiling. When the ceiling
// passes, the search ends there and the goal is marked GeneratorLimited:
// "throughput ≥ X, generator-limited" — the device's limit lies above what
// could be measured. When it fails, the search goes on below it as usual
// and the result is a real measurement. The flag is per goal: with a
// generator between a device's NDR and PDR, NDR is measured and PDR is
// flagged. A generator that reaches the rate it was asked for but reports
// less when pushed past it is taken at its word: the ceiling is what it
// reported.
//
// A trial that failed to run (Outcome.Err: an agent died, ...) is recorded
// and run again once, same rate and duration (Trial.Retry). If the retry
// fails too, the search stops with an error wrapping ErrTrialFailed and the
// run's error, naming both trials and the rate. An error returned by the
// TrialFunc itself aborts the search at once, without a retry.
//
// # RFC2544
//
// The first trial is at MaxPPS (phase "max"); if it meets the goal, that is
// the throughput, in one trial. Otherwise, binary search: the next rate is
// midway between the lower bound (MinPPS until a trial passed) and the
// upper bound ("binary"), until they are within the resolution. If no rate
// above MinPPS passed, MinPPS itself is tried last ("min"); if it fails
// too, the goal is not Found. After a generator-limited trial the ceiling
// is tried next ("ceiling"). The trial count is at most
// ceil(log2((MaxPPS − MinPPS) / resolution)) + 2 (measured: 8 at the
// default 1 % resolution, 15 at 1000 pps on 10GE 64-byte frames), plus up
// to two per generator-limited trial.
//
// # NDRPDR
//
// The goals are sorted; each trial's loss ratio tells for every goal
// whether its rate is a lower bound (loss ≤ goal) or an upper bound, so one
// trial serves all goals. The search runs two phases: "initial", trials of
// InitialDuration (default 1 s), then "final", trials of Duration. (When
// InitialDuration ≥ Duration, only the final phase runs.)
//
// In a phase of duration d, a goal's bounds come from the valid trials of
// at least d: the upper bound is the lowest rate that missed the goal, the
// lower bound the highest rate below it that met it (a lower rate that
// missed overrides higher passes: the search stays on the safe side of a
// noisy device). A goal is settled when its bounds are within the
// resolution, when it met the goal at the ceiling, or when it missed it at
// the lowest rate. The phase runs trials for the first unsettled goal
// (lowest loss ratio first) until all are settled at once. Its next rate:
//
//   - no trial yet: the ceiling (MaxPPS first, phase "max");
//   - in the final phase, first the bounds the short trials found: their
//     lower bound, then their upper bound, each confirmed or refuted by a
//     full-duration trial;
//   - no lower bound: below the upper bound by a step that doubles with each
//     upper bound found (the resolution first), or lower where the upper
//     bound's forwarding estimate says (rate × (1 − loss) / (1 − goal): the
//     rate at which a device that forwards a fixed rate and drops the rest
//     would just meet the goal, exact for such a device);
//   - no upper bound: the lowest rate a shorter trial failed at, else the
//     ceiling;
//   - both: if the upper bound's forwarding estimate is at the lower bound,
//     one resolution step up (doubling with each further lower bound); if it
//     lies in the lower half, there; else midway.
//
// A goal's result comes from the final trials only: a lower bound is final
// only where a trial of the full duration met the goal, an upper bound only
// where one missed it. Short trials only say where to look. (MLRsearch lets
// a short trial that missed a goal stand as an upper bound; here it must be
// confirmed, because a short trial's loss may be warm-up.) Because NDR's
// bounds and PDR's come from the same trials, NDR ≤ PDR always: a rate with
// no loss meets every goal.
//
// Unlike MLRsearch there are no intermediate phases (durations between the
// two), one trial per rate per phase (no exceed ratio), and the width is
// absolute. Measured on simulated devices at the default 1 % resolution:
// 5 trials (2 final) for a device that forwards a fixed rate, 10–16
// (4 final) with a PDR knee, 3 (1 final) when the generator is the limit,
// 2 (1 final) at line rate; over random devices and resolutions from
// 0.05 % to 5 %, at most 29 trials, never more than 2 final per goal when
// the device does not depend on the duration (up to 9 in all when short
// trials see up to 30 % more than long ones), and within
// 2 × goals × (ceil(log2(range / resolution)) + 2) always.
package search
