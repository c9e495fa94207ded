package main

import (
	"strings"
	"testing"
)

func TestRecvBadInput(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"recv"}, `required flag(s) "iface"`},
		{[]string{"recv", "--iface", "lo", "--method", "pcap"}, `--method "pcap": valid receiver methods are auto, xdp, afpacket and afxdp`},
		{[]string{"recv", "--iface", "lo", "--duration", "1s", "--until-idle", "2s"}, "at most one of --duration and --until-idle"},
		{[]string{"recv", "--iface", "lo", "--duration", "-1s"}, "want a positive duration"},
		{[]string{"recv", "--iface", "lo", "--repeats", "0"}, "--repeats 0: want 1 to 32768"},
		{[]string{"recv", "--iface", "lo", "--seq-stride", "3"}, "--seq-stride 3: want a power of two from 1 to 32768"},
		{[]string{"recv", "--iface", "lo", "--repeats", "16384", "--seq-stride", "16384"}, "--seq-stride 16384: the stride leaves too few bits of sequence for any window: want at most 8192"},
		{[]string{"recv", "--iface", "lo", "--repeats", "2", "--seq-stride", "8192"}, "--seq-stride 8192 with a window of 131072 sequences: the stride leaves 19 bits of sequence: want a window of at most 65536"},
		{[]string{"recv", "--iface", "lo", "--seq-capacity", "5000000000"}, "--seq-capacity was replaced by --window"},
		{[]string{"recv", "--iface", "lo", "--window", "3000"}, "--window 3000: want a power of two from 1024 to 134217728"},
		{[]string{"recv", "--iface", "lo", "--window", "512"}, "--window 512: want a power of two"},
		{[]string{"recv", "--iface", "lo", "--max-streams", "0"}, "--max-streams 0"},
		{[]string{"recv", "--iface", "nosuch0", "--method", "afpacket"}, "--iface nosuch0: no such interface (here: lo"},
	} {
		code, _, errOut := linerate(t, tt.args...)
		if code != 2 || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, code, errOut, tt.want)
		}
	}
}
