// Package engine runs the userspace generators' threads: one goroutine
// per CPU on its own locked OS thread pinned to that CPU, a common start,
// stop on count, duration or cancellation, live progress, and the
// Summary. A backend supplies the per-thread send loop (Thread).
//
// A paced thread keeps its rate with a [Pacer], a token bucket with
// nanosecond resolution: a thread that falls behind catches up at full
// speed for at most [CatchUp] and drops the excess beyond it. Short waits
// spin, longer ones sleep. Pinning uses sched_setaffinity, Linux only:
// elsewhere it fails with pktgen.ErrUnsupported.
package engine
