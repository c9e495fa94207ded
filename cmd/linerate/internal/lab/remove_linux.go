package lab

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Removed is what RemoveLab found and removed.
type Removed struct {
	Agents     []string // host names whose leftover agent process was ended
	VMs        []string // host names whose leftover guest (qemu) was stopped
	Links      []string // management links in the calling namespace
	Namespaces []string
	Dirs       []string
}

// String says what was removed, for people (`lab down`).
func (r Removed) String() string {
	s := fmt.Sprintf("removed: %d namespaces", len(r.Namespaces))
	if len(r.VMs) > 0 {
		s += fmt.Sprintf(", %d VM hosts stopped (%s)", len(r.VMs), strings.Join(r.VMs, ", "))
	}
	return s
}

// RemoveLab removes what the lab named name left behind after a crash
// or a kill (name "" = every lab): its agent processes and VM hosts, its management
// link, its namespaces and its directory under /run/linerate. A name
// Spec.Validate would refuse is refused, so that no path outside
// /run/linerate is ever built from it.
func RemoveLab(name string, log hclog.Logger) (Removed, error) {
	var r Removed
	if log == nil {
		log = hclog.NewNullLogger()
	}
	dirs := []string{DefaultDir(name)}
	prefix := Prefix(name)
	if name == "" {
		dirs, _ = filepath.Glob(DefaultDir("*"))
		prefix = "lr-"
	} else if err := CheckName(name); err != nil {
		return r, err
	}
	var errs []error
	for _, d := range dirs {
		killed, err := KillLeftoverAgents(d, 10*time.Second)
		if len(killed) > 0 {
			log.Info("stopped leftover agents", "dir", d, "hosts", killed)
		}
		r.Agents = append(r.Agents, killed...)
		errs = append(errs, err)
		stopped, err := StopLeftoverVMs(d, vmStop)
		if len(stopped) > 0 {
			log.Info("stopped leftover VM hosts", "dir", d, "hosts", stopped)
		}
		r.VMs = append(r.VMs, stopped...)
		errs = append(errs, err)
	}
	links, err := RemoveMgmtLinks(name)
	if len(links) > 0 {
		log.Info("removed management links", "links", links)
	}
	r.Links, errs = links, append(errs, err)
	ns, err := RemoveLeftovers(prefix)
	if len(ns) > 0 {
		log.Info("removed namespaces", "namespaces", ns)
	}
	r.Namespaces, errs = ns, append(errs, err)
	for _, d := range dirs {
		if _, err := os.Stat(d); err != nil {
			continue
		}
		if err := os.RemoveAll(d); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", d, err))
			continue
		}
		r.Dirs = append(r.Dirs, d)
	}
	return r, errors.Join(errs...)
}
