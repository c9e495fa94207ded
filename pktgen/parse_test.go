package pktgen

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files")

// Every captured layout parses to its golden JSON.
func TestParseDeviceFileGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/files/*")
	if len(files) < 7 {
		t.Fatalf("only %d fixture files", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			in, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			df, err := ParseDeviceFile(filepath.Base(f), bytes.NewReader(in))
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.MarshalIndent(df, "", "  ")
			golden := filepath.Join("testdata/golden", filepath.Base(f)+".json")
			if *update {
				os.MkdirAll(filepath.Dir(golden), 0o755)
				if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./pktgen -update)", err)
			}
			if diff := cmp.Diff(strings.TrimSpace(string(want)), string(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseResultFields(t *testing.T) {
	df, err := ParseDeviceFile("x", strings.NewReader(mustRead(t, "testdata/files/v6.12-veth0@0")))
	if err != nil {
		t.Fatal(err)
	}
	want := Result{State: StateOK, USec: 10128228, BusyUSec: 10126974, IdleUSec: 1254, Packets: 1000000, PktSize: 60,
		PPS: 98734, Mbps: 47, BPS: 47392320, Text: df.Result.Text}
	if df.Result != want {
		t.Errorf("result %+v\nwant   %+v", df.Result, want)
	}
	if df.Current != (Current{PktsSofar: 1000000, SeqNum: 1000001, StartedUS: 1933264893, StoppedUS: 1943393122, IdleUS: 1254}) {
		t.Errorf("current %+v", df.Current)
	}
	if c, i, d := df.Params["count"], df.Params["ifname"], df.Params["dst_min"]; c.Kind != ParamNumber || c.Number != 1000000 ||
		i.Kind != ParamText || i.Text != "veth0@0" || d.Kind != ParamText || d.Text != "198.18.0.2" {
		t.Errorf("params %v", df.Params)
	}
	if flags := df.Params["Flags"]; flags.Kind != ParamList || strings.Join(flags.List, ",") != "UDPSRC_RND,NO_TIMESTAMP,QUEUE_MAP_CPU,SHARED" {
		t.Errorf("flags %v", df.Params["Flags"])
	}
}

func TestParseQuirks(t *testing.T) {
	// The mislabelled "nsec" is microseconds.
	df, err := ParseDeviceFile("old", strings.NewReader(mustRead(t, "testdata/files/v2.6.32-nsec-eth0")))
	if err != nil || df.Result.USec != 95057439 || df.Result.PPS != 10519 {
		t.Errorf("nsec: %+v %v", df.Result, err)
	}
	// seq_num past 2^31 printed negative.
	df, err = ParseDeviceFile("imix", strings.NewReader(mustRead(t, "testdata/files/v6.8-imix-eth1@3")))
	if err != nil || df.Current.SeqNum != 4000000000 || df.Result.Frags != -1 || df.Result.Errors != 12 {
		t.Errorf("imix: %+v %+v %v", df.Current, df.Result, err)
	}
	if w := df.Params["imix_weights"]; w.Kind != ParamList || strings.Join(w.List, " ") != "64,7 570,4 1518,1" {
		t.Errorf("imix weights %v", df.Params["imix_weights"])
	}
	df, err = ParseDeviceFile("e", strings.NewReader(mustRead(t, "testdata/files/flag-error-eth0@1")))
	if err != nil || df.Result.State != StateError || !strings.HasPrefix(df.Result.Text, "Flag -:FOO:- unknown\nAvailable flags") {
		t.Errorf("error text: %+v %v", df.Result, err)
	}
}

func TestParseResultStates(t *testing.T) {
	for text, state := range map[string]string{
		"Idle": StateIdle, "": StateIdle, "Starting": StateStarting, "OK: count=100": StateIdle,
		"OK: dstmac 02:00:00:00:00:02": StateIdle, "Error starting": StateError, "ERROR: node not possible": StateError,
		`No such parameter "bogus"`: StateError, "OK: 1(c1+d0) usec, 1 (60byte,0frags)\n  1pps 0Mb/sec (480bps) errors: 0": StateOK,
	} {
		r, err := ParseResult(text)
		if err != nil || r.State != state {
			t.Errorf("ParseResult(%q) = %q, %v; want %q", text, r.State, err, state)
		}
	}
	if _, err := ParseResult("OK: 12(c1+d0) usec, garbage"); !errors.Is(err, ErrParse) {
		t.Errorf("malformed run result: %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{"", "hello\n", "Current:\n     pkts-sofar: x  errors: 0\n", "Current:\n seq_num: 99999999999\n"} {
		if _, err := ParseDeviceFile("bad", strings.NewReader(in)); !errors.Is(err, ErrParse) {
			t.Errorf("ParseDeviceFile(%q) = %v, want ErrParse", in, err)
		}
	}
}

func TestParseThreadFile(t *testing.T) {
	tf, err := ParseThreadFile(strings.NewReader("Running: veth0@0 \nStopped: veth1@0 eth0@0 \nResult: OK: add_device=veth0@0\n"))
	if err != nil || strings.Join(tf.Running, ",") != "veth0@0" || len(tf.Stopped) != 2 || tf.Result != "OK: add_device=veth0@0" {
		t.Errorf("%+v %v", tf, err)
	}
	if _, err := ParseThreadFile(strings.NewReader("Running: \n")); !errors.Is(err, ErrParse) {
		t.Errorf("no result: %v", err)
	}
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func FuzzParseDeviceFile(f *testing.F) {
	files, _ := filepath.Glob("testdata/files/*")
	for _, p := range files {
		b, _ := os.ReadFile(p)
		f.Add(string(b))
	}
	f.Add("Result: OK: 1(c1+d0) usec, 1 (60byte,0frags)\n 1pps 0Mb/sec (480bps) errors: 0")
	f.Fuzz(func(t *testing.T, in string) {
		df, err := ParseDeviceFile("fuzz", strings.NewReader(in))
		if err != nil {
			if !errors.Is(err, ErrParse) && !strings.Contains(err.Error(), "token too long") {
				t.Fatalf("error without ErrParse: %v", err)
			}
			return
		}
		switch df.Result.State {
		case StateOK, StateIdle, StateStarting, StateError:
		default:
			t.Fatalf("state %q", df.Result.State)
		}
		if _, err := json.Marshal(df); err != nil {
			t.Fatal(err)
		}
	})
}

// A parameter is a number, a word or a list, in Go as in its JSON, and
// prints as the file wrote it.
func TestParamKinds(t *testing.T) {
	p := Params{}
	parseParams(p, `count 1000  odev "eth1"  src_min:   Flags: `)
	for key, want := range map[string]struct {
		kind       ParamKind
		json, text string
	}{
		"count":   {ParamNumber, `1000`, "1000"},
		"odev":    {ParamText, `"eth1"`, "eth1"},
		"src_min": {ParamText, `""`, ""},
		"Flags":   {ParamList, `[]`, ""},
	} {
		got := p[key]
		b, err := json.Marshal(got)
		if got.Kind != want.kind || err != nil || string(b) != want.json || got.String() != want.text {
			t.Errorf("%s: %+v, JSON %s %v, text %q; want kind %d, JSON %s, text %q", key, got, b, err, got.String(), want.kind, want.json, want.text)
		}
	}
}
