package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

func TestSendConfigFromTopology(t *testing.T) {
	root := host(t)
	a := &app{log: hclog.NewNullLogger()}
	f := &sendFlags{iface: "eth0", dst: "198.18.0.2", dstMAC: "02:00:00:00:00:02", src: "198.18.1.1", frameSize: 64,
		count: 1003, rate: 4000, burst: 1, udpSrc: "9-109", udpDst: "9", vlan: -1, root: root}
	cfg, err := a.sendConfig(f)
	if err != nil {
		t.Fatal(err)
	}
	// The fixture NIC has 4 queues on node 0 (CPUs 0-3): one thread per queue.
	if fmt.Sprint(cfg.CPUs) != "[0 1 2 3]" || fmt.Sprint(cfg.Queues) != "[0 1 2 3]" || fmt.Sprint(cfg.Counts) != "[251 251 251 250]" {
		t.Errorf("cpus %v queues %v counts %v", cfg.CPUs, cfg.Queues, cfg.Counts)
	}
	// --rate is the total: 4000 pps is 1000 per thread, a delay of 1 ms.
	if cfg.PktSize != 60 || fmt.Sprint(cfg.Rates) != "[1000 1000 1000 1000]" || cfg.DelayNS != 0 || cfg.UDPSrcMax != 109 || !cfg.SrcPerThread {
		t.Errorf("pkt_size %d rates %v delay %d udp %d-%d", cfg.PktSize, cfg.Rates, cfg.DelayNS, cfg.UDPSrcMin, cfg.UDPSrcMax)
	}
	cmds := strings.Join(cfg.Commands(3), "\n")
	for _, want := range []string{"count 250", "pkt_size 60", "delay 1000000", "src_min 198.18.1.4", "queue_map_min 3", "udp_src_max 110"} {
		if !strings.Contains(cmds, want) {
			t.Errorf("thread 3 commands lack %q:\n%s", want, cmds)
		}
	}
	// A total that does not divide: the remainder on the first threads,
	// the threads together exactly --rate.
	f.rate = 1001
	if cfg, err = a.sendConfig(f); err != nil || fmt.Sprint(cfg.Rates) != "[251 250 250 250]" {
		t.Errorf("--rate 1001 over 4 threads: %v %v", cfg.Rates, err)
	}
	f.threads = 2
	if cfg, err = a.sendConfig(f); err != nil || fmt.Sprint(cfg.CPUs) != "[0 1]" {
		t.Errorf("--threads 2: %v %v", cfg, err)
	}
	f.threads, f.cpus = 0, "2-3"
	if cfg, err = a.sendConfig(f); err != nil || fmt.Sprint(cfg.CPUs) != "[2 3]" || cfg.Queues != nil {
		t.Errorf("--cpus 2-3: %+v %v", cfg, err)
	}
}

func TestSendBadInput(t *testing.T) {
	root := host(t)
	base := []string{"send", "--iface", "eth0", "--root", root, "--dst-mac", "02:00:00:00:00:02", "--src", "198.18.1.1"}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--dst", "198.18.0.2"}, "exactly one of --count"},
		{[]string{"--dst", "nowhere", "--count", "10"}, `--dst "nowhere"`},
		{[]string{"--dst", "198.18.0.2", "--count", "10", "--frame-size", "50"}, "--frame-size 50: want 64-"},
		{[]string{"--dst", "2001:2::1", "--count", "10", "--src", "2001:2::2", "--frame-size", "64"}, "--frame-size 64: want 82-"},
		{[]string{"--dst", "198.18.0.2", "--count", "10", "--threads", "9"}, "thread number 9 exceeds"},
		{[]string{"--dst", "198.18.0.2", "--count", "10", "--cpus", "3-1"}, `--cpus "3-1"`},
		{[]string{"--dst", "198.18.0.2", "--count", "10", "--udp-src", "9-x"}, `--udp-src "9-x"`},
		{[]string{"--dst", "198.18.0.2", "--count", "10", "--backend", "fpga"}, `--backend "fpga"`},
		{[]string{"--dst", "198.18.0.2", "--count", "10", "--src", "2001:2::2"}, "--src"},
		{[]string{"--dst", "198.18.0.2", "--count", "10", "--vlan", "5000"}, "--vlan 5000"},
		{[]string{"--dst", "198.18.0.2", "--count", "10", "--xmit-mode", "warp"}, "xmit_mode"},
		{[]string{"--dst", "198.18.0.2", "--count", "10", "--backend", "afxdp", "--need-wakeup", "sometimes"}, `--need-wakeup "sometimes": valid values are auto, on and off`},
		{[]string{"--dst", "198.18.0.2", "--count", "10", "--backend", "afpacket", "--need-wakeup", "on"}, "--need-wakeup on: an AF_XDP socket's bind flag (the afxdp backend's, the afxdp receiver method's); --backend afpacket has none"},
		{[]string{"--dst", "198.18.1.2", "--count", "10", "--threads", "2"}, "the destination itself"},
		{[]string{"--dst", "198.18.0.2", "--count", "10", "--rate", "inf"}, `invalid argument "inf" for "--rate" flag: want packets per second`},
		{[]string{"--dst", "198.18.0.2", "--count", "10", "--rate", "nan"}, `invalid argument "nan" for "--rate" flag: want packets per second`},
		{[]string{"--dst", "198.18.0.2", "--count", "10", "--rate", "0"}, `invalid argument "0" for "--rate" flag: want at least 1 pps per thread`},
		{[]string{"--dst", "198.18.0.2", "--count", "10", "--rate", "-5"}, `invalid argument "-5" for "--rate" flag: want at least 1 pps`},
		{[]string{"--dst", "198.18.0.2", "--count", "10", "--rate", "0.5"}, `invalid argument "0.5" for "--rate" flag: want at least 1 pps`},
		{[]string{"--dst", "198.18.0.2", "--count", "10", "--rate", "2.5"}, `"--rate" flag: want a whole number`},
		{[]string{"--dst", "198.18.0.2", "--count", "10", "--rate", "3"}, "--rate 3 over 4 threads: below 1 pps per thread: want --rate at least 4"},
	} {
		code, _, errOut := linerate(t, append(append([]string{}, base...), tt.args...)...)
		if code != 2 || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, code, errOut, tt.want)
		}
	}
}

func TestPktgenParseJSON(t *testing.T) {
	code, out, errOut := linerate(t, "pktgen", "parse", "../../pktgen/testdata/files/v6.12-veth0@0", "../../pktgen/testdata/files/v2.6.32-nsec-eth0", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got []struct {
		Device  string         `json:"device"`
		Params  map[string]any `json:"params"`
		Current map[string]any `json:"current"`
		Result  map[string]any `json:"result"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got) != 2 {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, k := range []string{"pkts_sofar", "errors", "seq_num", "started_us", "stopped_us", "idle_us"} {
		if _, ok := got[0].Current[k]; !ok {
			t.Errorf("current lacks %q", k)
		}
	}
	for _, k := range []string{"state", "usec", "busy_usec", "idle_usec", "packets", "pkt_size", "frags", "pps", "mbps", "bps", "errors", "text"} {
		if _, ok := got[0].Result[k]; !ok {
			t.Errorf("result lacks %q", k)
		}
	}
	if got[0].Device != "v6.12-veth0@0" || got[0].Result["state"] != "ok" || got[0].Result["packets"] != float64(1000000) || got[1].Result["usec"] != float64(95057439) {
		t.Errorf("parsed %+v", got)
	}
	if code, _, errOut := linerate(t, "pktgen", "parse", "/nonexistent"); code != 2 || !strings.Contains(errOut, "/nonexistent") {
		t.Errorf("missing file: exit %d %q", code, errOut)
	}
	if code, _, errOut := linerate(t, "pktgen", "parse", "main_test.go"); code != 1 || !strings.Contains(errOut, "main_test.go") {
		t.Errorf("not a pktgen file: exit %d %q", code, errOut)
	}
}
