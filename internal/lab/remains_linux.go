//go:build linux

package lab

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/vishvananda/netlink"
)

// Remains lists what of the lab named name is still there: its
// namespaces, its management link in the calling namespace, its
// directory dir, and processes whose command line names a file in dir
// (its agents). A lab removed cleanly leaves nothing.
func Remains(name, dir string) []string {
	var out []string
	left, err := Leftovers()
	if err != nil {
		out = append(out, fmt.Sprintf("namespaces unknown: %v", err))
	}
	for _, n := range left {
		if strings.HasPrefix(n, Prefix(name)) {
			out = append(out, "namespace "+n)
		}
	}
	if _, err := netlink.LinkByName(MgmtLinkName(name)); err == nil {
		out = append(out, "management link "+MgmtLinkName(name))
	}
	if _, err := os.Stat(dir); err == nil {
		out = append(out, "lab directory "+dir)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, _ := os.ReadFile(p)
		if strings.Contains(string(b), dir+"/") {
			out = append(out, fmt.Sprintf("process %s: %q", p, strings.ReplaceAll(string(b), "\x00", " ")))
		}
	}
	return out
}
