package gendoc

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// ManSection is the manual section of every page: user commands.
const ManSection = "1"

// Man writes one man page (section 1, roff) for root and for every
// command below it into dir, which it creates: `linerate.1`,
// `linerate-agent.1`, `linerate-agent-release.1`, … — the commands cobra
// calls available (hidden ones and the help command have none). version
// goes into each page's footer; date is the pages' date (the build's, so
// that two builds of one source write the same pages).
func Man(root *cobra.Command, dir, version string, date time.Time) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("man pages: create %s: %w", dir, err)
	}
	header := &doc.GenManHeader{
		Section: ManSection, // Title: each page's own, its command path
		Date:    &date,
		Source:  root.Name() + " " + version,
		Manual:  root.Name() + " manual",
	}
	root.DisableAutoGenTag = true
	if err := doc.GenManTree(root, header, dir); err != nil {
		return fmt.Errorf("man pages into %s: %w", dir, err)
	}
	return nil
}
