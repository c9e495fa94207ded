package results

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of /proc/PID/stat's start time: 100 on
// every Linux architecture Go runs on.
const clockTicks = 100

func (p LocalProcesses) proc(parts ...string) string {
	root := p.Root
	if root == "" {
		root = "/"
	}
	return filepath.Join(append([]string{root, "proc"}, parts...)...)
}

// bootID is /proc/sys/kernel/random/boot_id ("" when unreadable).
func (p LocalProcesses) bootID() string {
	b, err := os.ReadFile(p.proc("sys", "kernel", "random", "boot_id"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// started is when process pid started: the boot time (/proc/stat btime)
// plus its start time in ticks (/proc/PID/stat, field 22).
func (p LocalProcesses) started(pid int) (time.Time, bool) {
	stat, err := os.ReadFile(p.proc(strconv.Itoa(pid), "stat"))
	if err != nil {
		return time.Time{}, false
	}
	// The command (field 2) is in parentheses and may hold spaces.
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return time.Time{}, false
	}
	f := strings.Fields(string(stat[i+1:])) // from field 3
	if len(f) < 20 {
		return time.Time{}, false
	}
	ticks, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	btime, ok := p.bootTime()
	if !ok {
		return time.Time{}, false
	}
	return btime.Add(time.Duration(ticks) * time.Second / clockTicks).UTC(), true
}

func (p LocalProcesses) bootTime() (time.Time, bool) {
	b, err := os.ReadFile(p.proc("stat"))
	if err != nil {
		return time.Time{}, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			s, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return time.Time{}, false
			}
			return time.Unix(s, 0), true
		}
	}
	return time.Time{}, false
}

// exists tells whether pid has a /proc entry (when /proc itself is there;
// without it, the process is taken to run).
func (p LocalProcesses) exists(pid int) bool {
	if _, err := os.Stat(p.proc(strconv.Itoa(pid))); err == nil {
		return true
	} else if !errors.Is(err, fs.ErrNotExist) {
		return true
	}
	_, err := os.Stat(p.proc("self"))
	return err != nil
}
