package topology

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
)

// Process is a running process, found by its comm.
type Process struct {
	PID  int
	Comm string
}

// ProcessesNamed returns the processes in <root>/proc whose comm is one
// of names, by pid, or why /proc could not be listed (a root without
// one, a snapshot that did not capture it): no process found and none
// looked for are not the same answer.
func ProcessesNamed(r Root, names ...string) ([]Process, error) {
	ents, err := r.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("list /proc: %w", err)
	}
	var out []Process
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if comm, err := readString(r, "/proc/"+e.Name()+"/comm"); err == nil && slices.Contains(names, comm) {
			out = append(out, Process{PID: pid, Comm: comm})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PID < out[j].PID })
	return out, nil
}
