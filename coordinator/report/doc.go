// Package report renders result documents (coordinator/results) for
// people and for tools:
//
//   - Table: a terminal report (summary per frame size, the flows of
//     the trials that set the throughput, the hosts).
//   - CSV: one rectangular table, a row per summary size and a row per
//     trial, told apart by the first column (see CSVHeader).
//   - JSON: the document itself, as the store keeps it.
//   - HTML: one self-contained file that needs no network to open: inline
//     CSS and SVG charts drawn here (no script, no fonts, no images):
//     throughput against frame size in Mpps and in % of line rate with
//     the theoretical maximum, loss against offered load per frame size,
//     when packets were timed the delays (per size min, p50, p99 and max
//     against offered load, and a CDF per flow, each on its stated
//     clock), the flows of the trials that set the throughput, the
//     hosts, each host's IRQ map and fingerprint, every trial and the
//     spec.
//
// Chart elements carry stable hooks for tests and scrapers: each chart
// is <svg id="chart-…" class="chart">, each series <g class="series"
// data-series="NAME">, each point <circle class="point" data-size="64"
// data-value="…">. Series names: throughput-mpps, line-rate-mpps,
// ndr-mpps and pdr-mpps (chart-throughput-mpps); throughput-pct and
// line-rate-pct (chart-throughput-pct); loss-SIZE, one per frame size
// (chart-loss); latency-min, latency-p50, latency-p99 and latency-max
// (chart-latency-load-SIZE); cdf-SENDER-RECEIVER, or cdf-all for a
// size's delays together (chart-latency-cdf-SIZE; a run's
// chart-latency-cdf), with data-flow, data-steps and markers
// data-percentile="50" and "99".
//
// The theoretical maximum is results.LineRatePPS: pktgen.LinePPS of
// each host's link speed for the frame without FCS, shared by the flows
// on that link, times the number of flows (pairwise over equal links:
// pktgen.LinePPS(slowest link) × flows).
//
// Comparison and List print `results compare` and `results list`;
// RunTable and PathTruthTable a `linerate run` and the lab's truth;
// Members `linerate members`; SampleLine and ProgressLine the live lines
// of a run and a campaign. Write renders a document in a named format,
// FormatFromPath is the format an output file's name implies.
package report
