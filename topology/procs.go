package topology

import (
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
// of names, by pid.
func ProcessesNamed(r Root, names ...string) []Process {
	ents, err := r.ReadDir("/proc")
	if err != nil {
		return nil
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
	return out
}
