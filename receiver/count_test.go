package receiver

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// Invalid options are ErrOptions naming the field: by its Go name, or as
// the caller names it (a command's flags), in which case a zero it gave
// is a value, not the default.
func TestOptionsNames(t *testing.T) {
	flags := Names{Iface: "--iface", Method: "--method", Repeats: "--repeats", Window: "--window", MaxStreams: "--max-streams",
		Duration: "--duration", UntilIdle: "--until-idle"}
	for _, tt := range []struct {
		o    Options
		want string
	}{
		{Options{Method: "pcap"}, `Method "pcap": valid receiver methods are auto, xdp, afpacket and afxdp`},
		{Options{Method: "pcap", Names: flags}, `--method "pcap": valid receiver methods are auto, xdp, afpacket and afxdp`},
		{Options{Repeats: MaxRepeats + 1}, "Repeats 32769: want 1 to 32768"},
		{Options{Repeats: 0, Names: flags}, "--repeats 0: want 1 to 32768"},
		{Options{Repeats: 1, Window: 3000, Names: flags}, "--window 3000: want a power of two from 1024 to 134217728"},
		{Options{Repeats: 1, MaxStreams: 0, Names: flags}, "--max-streams 0: want 1 to 65536"},
		{Options{MaxStreams: -1}, "MaxStreams -1: want 1 to 65536"},
		{Options{MaxRanges: MaxRangesLimit + 1}, "MaxRanges 4097: want 1 to 4096"},
		{Options{Method: MethodXDP, NeedWakeup: "on", Names: Names{NeedWakeup: "--need-wakeup"}}, "--need-wakeup on: an AF_XDP socket's bind flag (the afxdp backend's, the afxdp receiver method's); method xdp has none: want auto, or an afxdp engine"},
		{Options{Method: MethodAFPacket, CPUs: []int{1}}, "CPUs [1]: the afxdp method's reader CPUs; method afpacket places its own"},
		{Options{Method: MethodXDP, ReflectVLAN: 100}, "ReflectVLAN 100: want a VLAN id 1-4094 with Reflect ports, or 0"},
		{Options{Method: MethodXDP, Reflect: []uint16{10100}, ReflectVLAN: 4095}, "ReflectVLAN 4095: want a VLAN id 1-4094"},
	} {
		_, err := tt.o.withDefaults()
		if !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want ErrOptions with %q", tt.o, err, tt.want)
		}
	}
	// Unnamed zeros are defaults; a named Window's zero too.
	o, err := Options{Repeats: 2, MaxStreams: 5, Names: flags}.withDefaults()
	if err != nil || o.Window != DefaultRepeatWindow || o.MaxRanges != DefaultMaxRanges {
		t.Errorf("defaults: %+v %v", o, err)
	}
	if _, err := Start(context.Background(), Options{Names: flags}); !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), "--iface is empty") {
		t.Errorf("no interface: %v", err)
	}
}

// Count refuses a negative duration and both ways to stop, naming them,
// before it touches the host.
func TestCountUntil(t *testing.T) {
	flags := Names{Duration: "--duration", UntilIdle: "--until-idle"}
	for _, tt := range []struct {
		u     Until
		names Names
		want  string
	}{
		{Until{Duration: -time.Second}, flags, "--duration -1s: want a positive duration such as 10s"},
		{Until{Idle: -time.Second}, flags, "--until-idle -1s: want a positive duration"},
		{Until{Duration: time.Second, Idle: 2 * time.Second}, flags, "give at most one of --duration and --until-idle"},
		{Until{Duration: time.Second, Idle: 2 * time.Second}, Names{}, "give at most one of Duration and Idle"},
	} {
		_, err := Count(context.Background(), Options{Iface: "nosuch0", Names: tt.names}, tt.u, nil)
		if !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want ErrOptions with %q", tt.u, err, tt.want)
		}
	}
}
