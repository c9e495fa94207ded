package report

import (
	"encoding/csv"
	"io"
	"strconv"

	"github.com/linerate/linerate/coordinator/results"
	"github.com/linerate/linerate/latency"
)

// CSVHeader is the CSV's one header. Every row has every column; the
// first, "row", says what the row is:
//
//   - "summary": one per frame size, in size order, first. Filled:
//     size, label, loss_ratio, generator_limited, throughput_pps,
//     l1_bps, line_rate_pct, line_pps (the line rate it is a % of,
//     summed over flows), line_basis (what sets that line rate: a
//     shaper, the busiest link), ndr_pps, pdr_pps, pdr_goal, trials,
//     throughput_trial, note.
//   - "trial": one per trial, in the order run, after the summary.
//     Filled: size, n, search, phase, offered_pps and achieved_pps (per
//     flow), duration_s, sent, received, lost, loss_ratio (over all
//     flows), line_pps (the size's line rate per flow, as offered_pps),
//     generator_limited, valid, passed, run_id, error.
//
// Both kinds also fill, when the trial timed its packets,
// latency_p50_us, latency_p99_us and latency_max_us (one-way, over all
// its flows) and latency_clock (the least certain of the flows' clocks);
// a summary row those of the size's RFC 2544 latency test (all its
// latency trials at the throughput rate), else of the trial that set the
// throughput.
//
// A summary row of a size with RFC 2544's back-to-back test also fills
// back_to_back_frames (the mean of its trials' longest bursts with no
// loss, per flow: the RFC's value), back_to_back_min_frames,
// back_to_back_max_frames, back_to_back_s (the mean burst's duration at
// the bursts' rate), back_to_back_rate_pps (per flow),
// back_to_back_trials and back_to_back_lower_bound (true: the path
// carried the longest burst searched, so the value is at least that); a
// trial row of one of its bursts fills burst (its frames per flow).
//
// Columns a row does not use are empty. Rates are plain decimals
// (packets or bits per second), ratios fractions, booleans true/false;
// the names are the document's JSON keys. Filter on the first column
// (`awk -F, '$1=="summary"'`) to get one kind. Per-flow detail is in the
// JSON and HTML reports.
var CSVHeader = []string{
	"row", "size", "label", "n", "search", "phase", "offered_pps", "duration_s",
	"sent", "received", "lost", "loss_ratio", "achieved_pps", "generator_limited", "valid", "passed", "run_id",
	"throughput_pps", "l1_bps", "line_rate_pct", "line_pps", "line_basis", "ndr_pps", "pdr_pps", "pdr_goal", "trials", "throughput_trial",
	"note", "error", "latency_p50_us", "latency_p99_us", "latency_max_us", "latency_clock",
	"burst", "back_to_back_frames", "back_to_back_min_frames", "back_to_back_max_frames", "back_to_back_s",
	"back_to_back_rate_pps", "back_to_back_trials", "back_to_back_lower_bound",
}

// backToBackCols are the back-to-back columns of b (none when nil).
func backToBackCols(kv map[string]string, b *results.BackToBack) map[string]string {
	if b != nil {
		kv["back_to_back_frames"], kv["back_to_back_min_frames"], kv["back_to_back_max_frames"] = num(b.MeanFrames), u64(b.MinFrames), u64(b.MaxFrames)
		kv["back_to_back_s"], kv["back_to_back_rate_pps"], kv["back_to_back_trials"] = num(b.MeanSec), num(b.RatePPS), strconv.Itoa(len(b.Frames))
		kv["back_to_back_lower_bound"] = strconv.FormatBool(b.LowerBound)
	}
	return kv
}

// latencyCols are the delay columns of l (none when nil).
func latencyCols(kv map[string]string, l *latency.Latency) map[string]string {
	if l != nil {
		m := l.Summary()
		kv["latency_p50_us"], kv["latency_p99_us"], kv["latency_max_us"], kv["latency_clock"] = num(m.P50Us), num(m.P99Us), num(m.MaxUs), string(l.Clock)
	}
	return kv
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// optNum is v, or empty when it is 0 (a rate not measured).
func optNum(v float64) string {
	if v == 0 {
		return ""
	}
	return num(v)
}

func u64(v uint64) string { return strconv.FormatUint(v, 10) }

// optU64 is v, or empty when it is 0.
func optU64(v uint64) string {
	if v == 0 {
		return ""
	}
	return u64(v)
}

// sizeLatency is a size's delays: its RFC 2544 latency test's, else its
// throughput trial's (nil: neither timed).
func sizeLatency(s sizeView) *latency.Latency {
	if s.Latency != nil {
		return s.Latency
	}
	if s.Trial != nil {
		return s.Trial.Latency()
	}
	return nil
}

// CSV writes the summary rows and the trial rows (see CSVHeader).
func CSV(w io.Writer, doc *results.Document) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	col := make(map[string]int, len(CSVHeader))
	for i, c := range CSVHeader {
		col[c] = i
	}
	row := func(kv map[string]string) error {
		rec := make([]string, len(CSVHeader))
		for k, v := range kv {
			rec[col[k]] = v
		}
		return cw.Write(rec)
	}
	for _, s := range sizeViews(doc) {
		tt := ""
		if s.Trial != nil {
			tt = strconv.Itoa(s.Trial.N)
		}
		if err := row(backToBackCols(latencyCols(map[string]string{
			"row": "summary", "size": strconv.Itoa(s.Size), "label": s.Label, "loss_ratio": num(s.LossRatio),
			"generator_limited": strconv.FormatBool(s.GeneratorLimited), "throughput_pps": num(s.ThroughputPPS),
			"l1_bps": num(s.L1BPS), "line_rate_pct": num(s.LineRatePct), "line_pps": optNum(s.LinePPS), "line_basis": s.Basis, "ndr_pps": optNum(s.NDRPPS),
			"pdr_pps": optNum(s.PDRPPS), "pdr_goal": optNum(s.PDRGoal), "trials": strconv.Itoa(s.Trials),
			"throughput_trial": tt, "note": s.Note,
		}, sizeLatency(s)), s.BackToBack)); err != nil {
			return err
		}
	}
	for _, t := range doc.AllTrials() {
		if err := row(latencyCols(map[string]string{
			"row": "trial", "size": strconv.Itoa(t.Size), "n": strconv.Itoa(t.N), "search": t.Search, "phase": t.Phase,
			"offered_pps": num(t.OfferedPPS), "duration_s": num(t.DurationSec), "sent": u64(t.Sent),
			"received": u64(t.Received), "lost": u64(t.Lost), "loss_ratio": num(t.LossRatio),
			"achieved_pps": num(t.AchievedPPS), "line_pps": optNum(t.LinePPS), "generator_limited": strconv.FormatBool(t.GeneratorLimited),
			"valid": strconv.FormatBool(t.Valid), "passed": strconv.FormatBool(t.Passed), "run_id": t.RunID, "error": t.Error,
			"burst": optU64(t.Burst),
		}, t.Latency())); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
