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
//     the flows of the trials that set the throughput, the hosts, each
//     host's IRQ map and fingerprint, every trial and the spec.
//
// Chart elements carry stable hooks for tests and scrapers: each chart
// is <svg id="chart-…" class="chart">, each series <g class="series"
// data-series="NAME">, each point <circle class="point" data-size="64"
// data-value="…">. Series names: throughput-mpps, line-rate-mpps,
// ndr-mpps and pdr-mpps (chart-throughput-mpps); throughput-pct and
// line-rate-pct (chart-throughput-pct); loss-SIZE, one per frame size
// (chart-loss).
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
