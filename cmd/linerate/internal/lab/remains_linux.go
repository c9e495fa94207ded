//go:build linux

package lab

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
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
	for _, p := range Processes(dir) {
		out = append(out, fmt.Sprintf("process %d: %q", p.PID, p.Cmdline))
	}
	return out
}

// Process is a running process of a lab: its pid and command line
// (arguments joined by spaces).
type Process struct {
	PID     int
	Cmdline string
}

// Processes are the processes whose command line names a file in dir
// (a lab's agents), read from /proc.
func Processes(dir string) []Process {
	var out []Process
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, _ := os.ReadFile(p)
		if !strings.Contains(string(b), dir+"/") {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil {
			out = append(out, Process{PID: pid, Cmdline: strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " ")})
		}
	}
	return out
}
