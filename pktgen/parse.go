package pktgen

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// ErrParse is returned when a pktgen file could not be parsed.
var ErrParse = errors.New("pktgen: parse error")

// Result states.
const (
	StateOK       = "ok"       // a finished run: the counters below are valid
	StateIdle     = "idle"     // no run yet ("Idle", or the ack of a setting such as "OK: count=100")
	StateStarting = "starting" // running now
	StateError    = "error"    // any error text
)

// DeviceFile is one /proc/net/pktgen/<dev> file, parsed.
type DeviceFile struct {
	Device  string  `json:"device"`
	Params  Params  `json:"params"`
	Current Current `json:"current"`
	Result  Result  `json:"result"`
}

// Params is the "Params:" section: every key pktgen printed, with its
// value.
type Params map[string]Param

// ParamKind is what a Param holds.
type ParamKind uint8

// Kinds of Param.
const (
	ParamText   ParamKind = iota // a word ("ifname: veth0@0"), possibly empty
	ParamNumber                  // a whole number ("count 1000000")
	ParamList                    // the rest of its line (Flags, imix_weights, …)
)

// Param is one value of the Params section. Its JSON is what it holds: a
// number, a string, or an array of strings.
type Param struct {
	Kind ParamKind
	// Text is the value as the file wrote it (without quotes), for
	// ParamText and ParamNumber.
	Text string
	// Number is Text's value, for ParamNumber.
	Number int64
	// List is the items, for ParamList (empty, never nil, for none).
	List []string
}

// param is s as a value: a number when it is one, else text.
func param(s string) Param {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return Param{Kind: ParamNumber, Text: s, Number: n}
	}
	return Param{Kind: ParamText, Text: s}
}

// String is the value as the file wrote it, a list's items separated by
// spaces.
func (p Param) String() string {
	if p.Kind == ParamList {
		return strings.Join(p.List, " ")
	}
	return p.Text
}

// MarshalJSON writes the number, the string or the array of strings.
func (p Param) MarshalJSON() ([]byte, error) {
	switch p.Kind {
	case ParamNumber:
		return json.Marshal(p.Number)
	case ParamList:
		return json.Marshal(p.List)
	}
	return json.Marshal(p.Text)
}

// Current is the "Current:" section.
type Current struct {
	PktsSofar uint64 `json:"pkts_sofar"`
	Errors    uint64 `json:"errors"`
	SeqNum    uint32 `json:"seq_num"`
	StartedUS uint64 `json:"started_us"`
	StoppedUS uint64 `json:"stopped_us"`
	IdleUS    uint64 `json:"idle_us"`
}

// Result is the "Result:" line(s). The three times are microseconds
// whatever the label says: kernels from about 2.6.31 to 3.3 printed "nsec"
// while printing microseconds.
type Result struct {
	State    string `json:"state"`
	USec     uint64 `json:"usec"`
	BusyUSec uint64 `json:"busy_usec"`
	IdleUSec uint64 `json:"idle_usec"`
	Packets  uint64 `json:"packets"`
	PktSize  int    `json:"pkt_size"`
	Frags    int    `json:"frags"`
	PPS      uint64 `json:"pps"`
	Mbps     uint64 `json:"mbps"`
	BPS      uint64 `json:"bps"`
	Errors   uint64 `json:"errors"`
	Text     string `json:"text"`
}

var (
	runResultRE = regexp.MustCompile(`^OK:\s+(\d+)\(c(\d+)\+d(\d+)\)\s+[un]sec,\s+(\d+)\s+\((\d+)byte,(-?\d+)frags\)\s+(\d+)pps\s+(\d+)Mb/sec\s+\((\d+)bps\)\s+errors:\s+(\d+)`)
	runPrefixRE = regexp.MustCompile(`^OK:\s+\d+\(c`)
)

// listKeys take the rest of their line as a list.
var listKeys = map[string]bool{"Flags": true, "imix_weights": true, "imix_size_counts": true, "mpls": true}

// ParseDeviceFile parses the text of a pktgen device file. device names
// the file in the result (and in errors).
func ParseDeviceFile(device string, r io.Reader) (*DeviceFile, error) {
	df := &DeviceFile{Device: device, Params: Params{}, Result: Result{State: StateIdle}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	section := ""
	var result []string
	seen := false
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		trimmed := strings.TrimSpace(text)
		switch {
		case section == "Result":
			result = append(result, text)
			continue
		case strings.HasPrefix(trimmed, "Params:"):
			section, seen = "Params", true
			trimmed = strings.TrimSpace(strings.TrimPrefix(trimmed, "Params:"))
		case trimmed == "Current:":
			section, seen = "Current", true
			continue
		case strings.HasPrefix(trimmed, "Result:"):
			section, seen = "Result", true
			result = append(result, strings.TrimSpace(strings.TrimPrefix(trimmed, "Result:")))
			continue
		}
		if trimmed == "" {
			continue
		}
		switch section {
		case "Params":
			parseParams(df.Params, trimmed)
		case "Current":
			if err := parseCurrent(&df.Current, trimmed); err != nil {
				return nil, fmt.Errorf("parse pktgen file %s line %d %q: %w", device, line, trimmed, err)
			}
		default:
			return nil, fmt.Errorf("parse pktgen file %s line %d %q: text before Params/Current/Result: %w", device, line, trimmed, ErrParse)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read pktgen file %s: %w", device, err)
	}
	if !seen {
		return nil, fmt.Errorf("parse pktgen file %s: no Params, Current or Result section: %w", device, ErrParse)
	}
	if result != nil {
		res, err := ParseResult(strings.Join(result, "\n"))
		if err != nil {
			return nil, fmt.Errorf("parse pktgen file %s: %w", device, err)
		}
		df.Result = res
	}
	return df, nil
}

// ParseResult interprets the text after "Result: ".
func ParseResult(text string) (Result, error) {
	text = strings.TrimSpace(text)
	r := Result{Text: text}
	switch {
	case text == "" || text == "Idle" || text == "NA":
		r.State = StateIdle
	case text == "Starting":
		r.State = StateStarting
	case strings.HasPrefix(text, "OK:"):
		m := runResultRE.FindStringSubmatch(text)
		if m == nil {
			if runPrefixRE.MatchString(text) {
				return r, fmt.Errorf("run result %q: unrecognised layout: %w", text, ErrParse)
			}
			r.State = StateIdle // the ack of a setting, e.g. "OK: count=100"
			return r, nil
		}
		r.State = StateOK
		var err error
		u := func(s string) uint64 {
			v, perr := strconv.ParseUint(s, 10, 64)
			if perr != nil && err == nil {
				err = fmt.Errorf("run result number %q: %w", s, ErrParse)
			}
			return v
		}
		r.USec, r.BusyUSec, r.IdleUSec, r.Packets = u(m[1]), u(m[2]), u(m[3]), u(m[4])
		r.PktSize, _ = strconv.Atoi(m[5])
		r.Frags, _ = strconv.Atoi(m[6])
		r.PPS, r.Mbps, r.BPS, r.Errors = u(m[7]), u(m[8]), u(m[9]), u(m[10])
		if len(m[5]) > 9 || len(m[6]) > 9 {
			err = fmt.Errorf("run result %q: size out of range: %w", text, ErrParse)
		}
		return r, err
	default:
		r.State = StateError
	}
	return r, nil
}

func parseParams(p Params, line string) {
	toks := strings.Fields(line)
	for i := 0; i < len(toks); i++ {
		key, hasColon := strings.CutSuffix(toks[i], ":")
		if !hasColon {
			if (key == "count" || key == "odev") && i+1 < len(toks) { // "count 1000", `odev "eth1"` have no colon
				p[key] = param(strings.Trim(toks[i+1], `"`))
				i++
			}
			continue
		}
		if listKeys[key] {
			items := []string{}
			for _, t := range toks[i+1:] {
				items = append(items, strings.TrimSuffix(t, ","))
			}
			p[key] = Param{Kind: ParamList, List: items}
			return
		}
		if i+1 < len(toks) && !strings.HasSuffix(toks[i+1], ":") {
			p[key] = param(toks[i+1])
			i++
		} else {
			p[key] = Param{Kind: ParamText}
		}
	}
}

func parseCurrent(c *Current, line string) error {
	toks := strings.Fields(line)
	for i := 0; i+1 < len(toks); i++ {
		key, ok := strings.CutSuffix(toks[i], ":")
		if !ok {
			continue
		}
		val := toks[i+1]
		var dst *uint64
		switch key {
		case "pkts-sofar":
			dst = &c.PktsSofar
		case "errors":
			dst = &c.Errors
		case "started":
			dst = &c.StartedUS
		case "stopped":
			dst = &c.StoppedUS
		case "idle":
			dst = &c.IdleUS
		case "seq_num":
			// u32 printed with %d: negative past 2^31.
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil || n < -(1<<31) || n >= 1<<32 {
				return fmt.Errorf("seq_num %q: %w", val, ErrParse)
			}
			c.SeqNum = uint32(n)
			i++
			continue
		default:
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSuffix(val, "us"), 10, 64)
		if err != nil {
			return fmt.Errorf("%s %q: %w", key, val, ErrParse)
		}
		*dst = n
		i++
	}
	return nil
}

// ThreadFile is a /proc/net/pktgen/kpktgend_<cpu> file.
type ThreadFile struct {
	Running []string `json:"running"`
	Stopped []string `json:"stopped"`
	Result  string   `json:"result"`
}

// ParseThreadFile parses a kpktgend_<cpu> file.
func ParseThreadFile(r io.Reader) (*ThreadFile, error) {
	b, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("read pktgen thread file: %w", err)
	}
	tf := &ThreadFile{Running: []string{}, Stopped: []string{}}
	var res []string
	inResult := false
	for _, l := range strings.Split(string(b), "\n") {
		t := strings.TrimSpace(l)
		switch {
		case inResult:
			res = append(res, t)
		case strings.HasPrefix(t, "Running:"):
			tf.Running = append(tf.Running, strings.Fields(strings.TrimPrefix(t, "Running:"))...)
		case strings.HasPrefix(t, "Stopped:"):
			tf.Stopped = append(tf.Stopped, strings.Fields(strings.TrimPrefix(t, "Stopped:"))...)
		case strings.HasPrefix(t, "Result:"):
			inResult = true
			res = append(res, strings.TrimSpace(strings.TrimPrefix(t, "Result:")))
		}
	}
	if !inResult {
		return nil, fmt.Errorf("parse pktgen thread file: no Result line: %w", ErrParse)
	}
	tf.Result = strings.TrimSpace(strings.Join(res, "\n"))
	return tf, nil
}
