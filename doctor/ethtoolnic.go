package doctor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/linerate/linerate/internal/ethtool"
	"github.com/linerate/linerate/topology"
)

// The one SIOCETHTOOL reader is what a live host opens.
var _ NIC = (*ethtool.Reader)(nil)

// ethtoolUnread is c when its ethtool parameter could not be read: a
// PASS when the driver does not expose it (EOPNOTSUPP: a veth has no
// pause frames, nothing to tune), else a WARN naming what failed.
func ethtoolUnread(c Check, call string, err error) Check {
	if errors.Is(err, ethtool.ErrNotSupported) {
		c.Status = Pass
		c.Evidence = append(c.Evidence, fmt.Sprintf("%s: the driver does not expose it (%v)", call, err))
		return c
	}
	c.Status = Warn
	c.Evidence = append(c.Evidence, fmt.Sprintf("%s: not readable (%v)", call, err))
	return c
}

// nicOrErr is the interface's ethtool, or the error that kept it from
// being opened.
func (e *env) nicOrErr() (NIC, error) {
	if e.ethtool == nil {
		err := e.ethErr
		if err == nil {
			err = errors.New("no ethtool")
		}
		return nil, fmt.Errorf("open ethtool of %s: %w", e.o.Iface, err)
	}
	return e.ethtool, nil
}

// readParam reads a check's ethtool parameter and returns it with the
// call its evidence names (`ethtool -a IF (ETHTOOL_GPAUSEPARAM)`); when
// it cannot, ok is false and c is already judged (ethtoolUnread).
func readParam[T any](e *env, c *Check, flag, op string, read func(NIC) (T, error)) (v T, call string, ok bool) {
	call = fmt.Sprintf("ethtool %s%s (%s)", flag, e.o.Iface, op)
	nic, err := e.nicOrErr()
	if err == nil {
		if v, err = read(nic); err == nil {
			return v, call, true
		}
	}
	*c = ethtoolUnread(*c, call, err)
	return v, call, false
}

// paramCheck is a check of one ethtool parameter: read (or judged
// unread), its evidence the call and text of what was read, a PASS
// unless judge says otherwise.
func paramCheck[T any](e *env, c Check, flag, op string, read func(NIC) (T, error), text func(T) string, judge func(T, *Check)) Check {
	v, call, ok := readParam(e, &c, flag, op, read)
	if !ok {
		return c
	}
	c.Evidence = append(c.Evidence, call+": "+text(v))
	c.Status = Pass
	judge(v, &c)
	return c
}

// lead puts finding first in c's evidence: the run's text report and
// warnings show a WARN's or FAIL's first item, which must be what it is
// for, the context after it.
func lead(c *Check, finding string) {
	c.Evidence = append([]string{finding}, c.Evidence...)
}

// warnFix makes c a WARN with its fix and the fix's class.
func warnFix(c *Check, fix string, class FixClass) {
	c.Status, c.Fix, c.FixClass = Warn, fix, class
}

// fixParam is a fixer of one ethtool parameter: it reads it, asks want
// what to write (and whether the check warns), and journals the read
// JSON before it writes. A driver without the parameter has nothing to
// fix: the check says so.
func fixParam[T any](e *env, j *journaler, kind topology.SettingKind, read func(NIC) (T, error), write func(NIC, T) error, want func(T) (T, bool)) error {
	nic, err := e.nicOrErr()
	if err != nil {
		return err
	}
	was, err := read(nic)
	switch {
	case errors.Is(err, ethtool.ErrNotSupported):
		return nil
	case err != nil:
		return err
	}
	w, change := want(was)
	if !change {
		return nil
	}
	orig, err := json.Marshal(was)
	if err != nil {
		return err
	}
	return j.change(topology.Setting{Kind: kind, Key: e.o.Iface, Original: string(orig)},
		func() error { return write(nic, w) },
		func() (string, error) { return asJSON(func() (T, error) { return read(nic) }) })
}

// asJSON reads a parameter as the JSON a journal keeps as Original.
func asJSON[T any](read func() (T, error)) (string, error) {
	v, err := read()
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(v)
	return string(b), err
}

// ethtoolRestorer restores one kind of ethtool parameters: Current reads
// them as the JSON a fix journaled, Restore writes the journaled struct
// back, every field of it.
type ethtoolRestorer struct {
	open func(string) (NIC, error)
	kind topology.SettingKind
}

// Current reads the setting's interface now. An interface that is gone
// matches fs.ErrNotExist, so that a restore skips it as vanished.
func (r ethtoolRestorer) Current(s topology.Setting) (string, error) {
	var out string
	err := r.with(s, func(nic NIC) (err error) {
		switch r.kind {
		case topology.KindEthtoolPause:
			out, err = asJSON(nic.Pause)
		case topology.KindEthtoolCoalesce:
			out, err = asJSON(nic.Coalesce)
		case topology.KindEthtoolRings:
			out, err = asJSON(nic.Rings)
		}
		return err
	})
	return out, err
}

// Restore writes s.Original back to the setting's interface.
func (r ethtoolRestorer) Restore(s topology.Setting) error {
	return r.with(s, func(nic NIC) error {
		switch r.kind {
		case topology.KindEthtoolPause:
			var p ethtool.Pause
			if err := decodeOriginal(s, &p); err != nil {
				return err
			}
			return nic.SetPause(p)
		case topology.KindEthtoolCoalesce:
			var c ethtool.Coalesce
			if err := decodeOriginal(s, &c); err != nil {
				return err
			}
			return nic.SetCoalesce(c)
		case topology.KindEthtoolRings:
			var g ethtool.Rings
			if err := decodeOriginal(s, &g); err != nil {
				return err
			}
			return nic.SetRings(g)
		}
		return nil
	})
}

func (r ethtoolRestorer) with(s topology.Setting, fn func(NIC) error) error {
	switch r.kind {
	case topology.KindEthtoolPause, topology.KindEthtoolCoalesce, topology.KindEthtoolRings:
	default:
		return fmt.Errorf("%s %s: not an ethtool setting", s.Kind, s.Key)
	}
	nic, err := r.open(s.Key)
	if err == nil {
		err = fn(nic)
		_ = nic.Close()
	}
	if errors.Is(err, ethtool.ErrNoInterface) {
		return fmt.Errorf("%w: %w", fs.ErrNotExist, err)
	}
	return err
}

// decodeOriginal parses a journaled Original strictly: a field this
// version does not know would otherwise be dropped, and the restore would
// not be the original.
func decodeOriginal(s topology.Setting, v any) error {
	d := json.NewDecoder(bytes.NewReader([]byte(s.Original)))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("journaled %s of %s %q: %w", s.Kind, s.Key, s.Original, err)
	}
	return nil
}

// nicFacts fills the rings, coalescing, pause, offloads and firmware, each
// a short text: "rx 256/4096 tx 256/4096"; "unsupported" when the
// driver does not expose it, "" when it could not be read.
func nicFacts(e *env, f *Facts) {
	nic := e.ethtool
	if nic == nil {
		return
	}
	f.Rings = factOf(nic.Rings, ethtool.Rings.String)
	f.Coalesce = factOf(nic.Coalesce, ethtool.Coalesce.String)
	f.Pause = factOf(nic.Pause, ethtool.Pause.String)
	f.Offloads = factOf(nic.Features, offloadsFact)
	f.Firmware = factOf(nic.Info, func(i ethtool.DriverInfo) string {
		if i.Firmware == "" {
			return i.Driver
		}
		return i.Driver + " " + i.Firmware
	})
}

func factOf[T any](read func() (T, error), text func(T) string) string {
	v, err := read()
	switch {
	case errors.Is(err, ethtool.ErrNotSupported):
		return "unsupported"
	case err != nil:
		return ""
	}
	return text(v)
}

// offloadsFact is the offloads the offloads check judges: "gro on lro
// off tso on gso on", each as `ethtool -K` names it.
func offloadsFact(fs []ethtool.Feature) string {
	by := featureMap(fs)
	var out []string
	for _, o := range offloadNames {
		if f, ok := by[o.feature]; ok {
			out = append(out, o.short+" "+onOff(f.Active))
		}
	}
	return strings.Join(out, " ")
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
