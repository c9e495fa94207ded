package main

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/linerate/linerate/coordinator/report"
	"github.com/linerate/linerate/coordinator/results"
)

func (a *app) resultsCommand() *cobra.Command {
	cmd := group(&cobra.Command{
		Use:   "results",
		Short: "List, show and compare stored run and campaign results",
		Long: `Every run and campaign is stored as one JSON document <id>.json in a results
directory (--dir, default ` + results.DefaultDir + `). An ID is a full id, any unique
prefix of one, or the path of a result file (ending in .json).`,
	})
	cmd.AddCommand(a.resultsList(), a.resultsShow(), a.resultsCompare())
	return cmd
}

func dirFlag(cmd *cobra.Command, dir *string) {
	cmd.Flags().StringVar(dir, "dir", results.DefaultDir, "results directory")
}

func (a *app) resultsList() *cobra.Command {
	var dir string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list [--dir D] [--json]",
		Short: "List stored results, oldest first",
		Long: `list prints every stored result, oldest first: id, kind, name, status,
created, frame sizes and the throughput per size. A file that cannot be read
(another schema version, broken JSON) is listed as unreadable with the reason.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			entries, err := results.NewStore(dir).List()
			if err != nil {
				return loadError(err)
			}
			if asJSON {
				return a.writeJSON(entries)
			}
			return report.List(a.stdout, entries)
		},
	}
	dirFlag(cmd, &dir)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: [{id, kind, name, status, created, sizes, summary, file, problem}]")
	return cmd
}

func (a *app) resultsShow() *cobra.Command {
	var dir string
	var asJSON, asCSV bool
	cmd := &cobra.Command{
		Use:   "show ID [--dir D] [--json | --csv]",
		Short: "Show one stored result as a table, its JSON document, or CSV",
		Args:  exactArgs(1, "ID"),
		RunE: func(_ *cobra.Command, args []string) error {
			if asJSON && asCSV {
				return usagef("--json and --csv: choose one")
			}
			doc, err := loadResult(dir, args[0])
			if err != nil {
				return err
			}
			switch {
			case asJSON:
				return report.JSON(a.stdout, doc)
			case asCSV:
				return report.CSV(a.stdout, doc)
			}
			return report.Table(a.stdout, doc)
		},
	}
	dirFlag(cmd, &dir)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the stored JSON document")
	cmd.Flags().BoolVar(&asCSV, "csv", false, "print CSV: a row per frame size (row=summary), then a row per trial (row=trial)")
	return cmd
}

func (a *app) resultsCompare() *cobra.Command {
	var dir, threshold, latencyThreshold string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "compare A B [--dir D] [--threshold 2%] [--latency-threshold 10%] [--json]",
		Short: "Compare result B against reference A per frame size; exit 1 on a regression",
		Long: `compare measures B against the reference A, per frame size: throughput of both,
the delta in pps and %, loss ratios, NDR and PDR deltas when searched. A size
is flagged as a regression when B's throughput, NDR or PDR is lower than A's
by more than --threshold (a percentage such as 2% or a fraction such as 0.02),
or its loss ratio is higher by more than the threshold in absolute terms, or
the p99 one-way delay of the trial that set its throughput is higher by more
than --latency-threshold and by more than both clocks' bounds (delays on
unsynchronised clocks are shown, never flagged).
Sizes measured on one side only are listed, and so is every host whose
fingerprint differs (kernel, driver, firmware, NIC, link speed, NUMA node,
backend, method, IRQ map, tool version), and the spec fields that differ.

Exit status: 0 no regression, 1 a regression was flagged (the comparison is
printed first), 2 bad input (an unknown or ambiguous id, another schema, a
bad --threshold).`,
		Args: exactArgs(2, "A B"),
		RunE: func(_ *cobra.Command, args []string) error {
			t, err := parseThreshold("--threshold", threshold)
			if err != nil {
				return err
			}
			lt, err := parseThreshold("--latency-threshold", latencyThreshold)
			if err != nil {
				return err
			}
			docA, err := loadResult(dir, args[0])
			if err != nil {
				return err
			}
			docB, err := loadResult(dir, args[1])
			if err != nil {
				return err
			}
			c := results.CompareWith(docA, docB, t, lt)
			if asJSON {
				err = a.writeJSON(c)
			} else {
				err = report.Comparison(a.stdout, c)
			}
			if err != nil {
				return err
			}
			// A regression ends the command with exit status 1.
			return c.Err()
		},
	}
	dirFlag(cmd, &dir)
	cmd.Flags().StringVar(&threshold, "threshold", "2%", "how much worse B may be before it is flagged: 2% or 0.02")
	cmd.Flags().StringVar(&latencyThreshold, "latency-threshold", "10%", "how much higher B's p99 one-way delay may be before it is flagged: 10% or 0.1")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the comparison as JSON")
	return cmd
}

// exactArgs wants n arguments named names, as a usage error.
func exactArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s: want %s, got %d argument(s) (usage: %s)", cmd.CommandPath(), names, len(args), cmd.UseLine())
		}
		return nil
	}
}

// parseThreshold reads flag's "2%" (a percentage) or "0.02" (a fraction).
func parseThreshold(flag, s string) (float64, error) {
	bad := func() (float64, error) {
		return 0, usagef("%s %q: want a percentage from 0%% to under 100%% (2%%) or a fraction from 0 to under 1 (0.02)", flag, s)
	}
	v := strings.TrimSpace(s)
	pct := strings.HasSuffix(v, "%")
	f, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(v, "%")), 64)
	if err != nil || f < 0 {
		return bad()
	}
	if pct {
		f /= 100
	}
	if f >= 1 {
		return bad()
	}
	if f == 0 {
		// Compare takes ≤ 0 as its default; flag any drop at all.
		f = 1e-12
	}
	return f, nil
}

// loadResult reads the document an ID argument names: a file path
// (ending in .json and existing), or an id or id prefix in dir. Unknown,
// ambiguous and unreadable documents are bad input (exit 2).
func loadResult(dir, arg string) (*results.Document, error) {
	if strings.HasSuffix(arg, ".json") {
		if _, err := os.Stat(arg); err == nil {
			doc, err := results.ReadFile(arg)
			if err != nil {
				return nil, usagef("%w (want a linerate result document, schema %s)", err, results.Schema)
			}
			return doc, nil
		}
	}
	doc, err := results.NewStore(dir).Load(arg)
	if err != nil {
		return nil, loadError(err)
	}
	return doc, nil
}

// loadError makes the store's bad-input errors usage errors (exit 2).
func loadError(err error) error {
	var syntax *json.SyntaxError
	if errors.Is(err, results.ErrNotFound) || errors.Is(err, results.ErrAmbiguous) || errors.Is(err, results.ErrSchema) ||
		errors.Is(err, results.ErrNoDir) || errors.Is(err, fs.ErrNotExist) || errors.As(err, &syntax) {
		return usageError{err}
	}
	return err
}
