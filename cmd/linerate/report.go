package main

import (
	"bytes"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/linerate/linerate/coordinator/report"
	"github.com/linerate/linerate/internal/enum"
	"github.com/linerate/linerate/internal/safefile"
)

func (a *app) reportCommand() *cobra.Command {
	var dir, out string
	var format report.Format
	cmd := &cobra.Command{
		Use:   "report ID [--dir D] [-o FILE] [--format " + enum.Usage(report.Formats) + "]",
		Short: "Render a stored result: a self-contained HTML report, CSV, JSON or a table",
		Long: `report renders the stored result ID (a full id, a unique prefix, or a result
file's path) to -o FILE, or to standard output without -o (or with -o -).
Only a regular file is replaced: a directory, a device or a fifo named by
-o (or by a symbolic link -o names) is refused and left alone.
The format comes from --format, else from FILE's extension (.html, .csv,
.json, .txt), else it is a table.

The HTML report is one file that needs no network to open: inline CSS and
SVG charts (throughput vs frame size in Mpps and in % of line rate with the
theoretical maximum drawn; loss vs offered load per frame size), the flows
of the trials that set the throughput, the hosts, each host's IRQ map and
fingerprint, every trial and the spec. The file is written whole or not at
all.`,
		Args: exactArgs(1, "ID"),
		RunE: func(_ *cobra.Command, args []string) error {
			f := format
			if f == "" {
				f = report.FormatFromPath(out)
				if f == "" && out != "" && out != "-" {
					return usagef("-o %s: cannot tell the format from the extension (.html, .csv, .json, .txt): give --format %s", out, enum.Usage(report.Formats))
				}
				if f == "" {
					f = report.FormatTable
				}
			}
			if err := f.Check(); err != nil {
				return usagef("--format %v", err)
			}
			if out == "" {
				out = safefile.Stdout
			}
			if err := safefile.Check(out); err != nil {
				return usagef("-o %v", err)
			}
			doc, err := loadResult(dir, args[0])
			if err != nil {
				return err
			}
			var buf bytes.Buffer
			if err := report.Write(&buf, f, doc); err != nil {
				return err
			}
			if err := safefile.Output(out, a.stdout, buf.Bytes()); err != nil {
				return fmt.Errorf("write report: %w", err)
			}
			if out != safefile.Stdout {
				a.log.Info("report written", "file", out, "format", f, "result", doc.ID)
			}
			return nil
		},
	}
	dirFlag(cmd, &dir)
	cmd.Flags().StringVarP(&out, "output", "o", "", "output file (- or none: standard output)")
	cmd.Flags().StringVar((*string)(&format), "format", "", enum.Or(report.Formats)+" (default: from -o's extension, else "+string(report.FormatTable)+")")
	return cmd
}
