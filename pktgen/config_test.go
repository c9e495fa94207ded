package pktgen

import (
	"bytes"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*Config)
		want string // substring of the error; "" = valid
	}{
		{"base", func(c *Config) {}, ""},
		{"duration only", func(c *Config) { c.Count, c.Duration = 0, time.Second }, ""},
		{"ipv6", func(c *Config) {
			c.DstMin, c.SrcMin, c.PktSize = netip.MustParseAddr("2001:2::2"), netip.MustParseAddr("2001:2::100"), 78
		}, ""},
		{"no device", func(c *Config) { c.Device = "" }, "device: empty"},
		{"device with @", func(c *Config) { c.Device = "eth0@1" }, "not an interface name"},
		{"no cpu", func(c *Config) { c.CPUs = nil }, "cpus: no CPU"},
		{"cpu twice", func(c *Config) { c.CPUs = []int{1, 1} }, "cpu 1 twice"},
		{"never ends", func(c *Config) { c.Count = 0 }, "never end"},
		{"frame too small", func(c *Config) { c.PktSize = 50 }, "pkt_size: 50: want 58-65535"},
		{"ipv6 frame too small", func(c *Config) {
			c.DstMin, c.SrcMin, c.PktSize = netip.MustParseAddr("2001:2::2"), netip.Addr{}, 60
		}, "want 78-65535"},
		{"vlan raises the minimum", func(c *Config) { c.HasVLAN, c.VLANID, c.PktSize = true, 5, 60 }, "want 62-65535"},
		{"size and imix", func(c *Config) { c.IMIX = []IMIXEntry{{60, 7}} }, "one of pkt_size"},
		{"imix weight", func(c *Config) { c.PktSize, c.IMIX = 0, []IMIXEntry{{60, 0}} }, "imix weight"},
		{"imix and clone", func(c *Config) { c.PktSize, c.IMIX, c.CloneSkb = 0, []IMIXEntry{{60, 1}}, 5 }, "clone_skb: must be 0 with imix"},
		{"range inverted", func(c *Config) { c.PktSize, c.MinPktSize, c.MaxPktSize = 0, 200, 100 }, "range 200-100"},
		{"two rates", func(c *Config) { c.RatePPS, c.DelayNS = 10, 10 }, "one of delay"},
		{"many threads on few cpus", func(c *Config) { c.CPUs = []int{0, 1, 0, 1, 0, 1, 0, 1} }, "cpus 0, 1 twice: one thread per CPU (8 threads, 2 distinct CPUs)"},
		{"per-thread rates", func(c *Config) { c.Rates = []uint64{4, 3} }, ""},
		{"per-thread rates and ratep", func(c *Config) { c.Rates, c.RatePPS = []uint64{4, 3}, 7 }, "one of delay"},
		{"per-thread rates short", func(c *Config) { c.Rates = []uint64{7} }, "1 per-thread rates for 2 CPUs"},
		{"per-thread rate 0", func(c *Config) { c.Rates = []uint64{1, 0} }, "[1 0]: a per-thread rate of 0 pps would send unpaced"},
		{"no dst", func(c *Config) { c.DstMin = netip.Addr{} }, "dst: missing"},
		{"mixed families", func(c *Config) { c.SrcMin = netip.MustParseAddr("2001:2::1") }, "different IP families"},
		{"dst range inverted", func(c *Config) { c.DstMax = netip.MustParseAddr("198.18.0.1") }, "dst_max"},
		{"udp range", func(c *Config) { c.UDPSrcMin, c.UDPSrcMax = 100, 10 }, "udp_src: range 100-10"},
		{"vlan id", func(c *Config) { c.HasVLAN, c.VLANID = true, 4096 }, "want id 0-4095"},
		{"tos", func(c *Config) { c.HasTOS, c.TOS = true, 256 }, "tos: 256"},
		{"unknown flag", func(c *Config) { c.Flags = []string{"FAST"} }, `flag: "FAST" unknown`},
		{"xmit mode", func(c *Config) { c.XmitMode = "warp" }, `xmit_mode: "warp"`},
		{"burst through qdisc", func(c *Config) { c.XmitMode, c.Burst = XmitQueue, 4 }, "queue_xmit"},
		{"bad mac", func(c *Config) { c.DstMAC = []byte{1, 2, 3} }, "dst_mac"},
		{"thread destinations", func(c *Config) { c.ThreadDst = twoDests() }, ""},
		{"thread destinations short", func(c *Config) { c.ThreadDst = twoDests()[:1] }, "1 destinations for 2 threads"},
		{"thread destination family", func(c *Config) {
			c.ThreadDst = twoDests()
			c.ThreadDst[1].Addr = netip.MustParseAddr("2001:2::9")
		}, "thread 1: 2001:2::9 is not of dst_min"},
		{"thread destination mac", func(c *Config) { c.ThreadDst = twoDests(); c.ThreadDst[0].MAC = nil }, "thread 0: MAC"},
		{"thread destinations and range", func(c *Config) {
			c.ThreadDst, c.DstMax = twoDests(), netip.MustParseAddr("198.18.0.9")
		}, "exclude a destination range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := baseConfig()
			tt.mod(&c)
			err := c.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("valid config rejected: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want ErrConfig with %q", err, tt.want)
			}
		})
	}
}

func TestCommands(t *testing.T) {
	c := baseConfig()
	c.UDPSrcMin, c.UDPSrcMax = 9, 109
	c.Burst, c.RatePPS = 32, 1000
	c.HasVLAN, c.VLANID, c.VLANPrio, c.PktSize = true, 100, 3, 64
	c.HasTOS, c.TOS = true, 0x10
	want := []string{
		"count 5000", "pkt_size 64", "ratep 1000", "dst_min 198.18.0.2", "dst_max 198.18.0.2",
		"src_min 198.18.1.2", "src_max 198.18.1.2", "dst_mac 02:00:00:00:00:02",
		"udp_src_min 9", "udp_src_max 110", "vlan_id 100", "vlan_p 3", "vlan_cfi 0", "tos 10",
		"flag NO_TIMESTAMP", "flag QUEUE_MAP_CPU", "burst 32",
	}
	if diff := cmp.Diff(want, c.Commands(1)); diff != "" {
		t.Errorf("thread 1 commands (-want +got):\n%s", diff)
	}
	c6 := baseConfig()
	c6.DstMin, c6.SrcMin, c6.PktSize, c6.Flags = netip.MustParseAddr("2001:2::2"), netip.MustParseAddr("2001:2::a"), 78, nil
	c6.IMIX, c6.PktSize = []IMIXEntry{{78, 7}, {570, 4}, {1514, 1}}, 0
	want6 := []string{"count 5000", "imix_weights 78,7 570,4 1514,1", "delay 0", "dst6 2001:2::2", "src6 2001:2::b", "dst_mac 02:00:00:00:00:02"}
	if diff := cmp.Diff(want6, c6.Commands(1)); diff != "" {
		t.Errorf("ipv6 imix commands (-want +got):\n%s", diff)
	}
	if got := c6.FrameBytes(); got < 361.66 || got > 361.67 {
		t.Errorf("imix mean frame %v, want (78*7+570*4+1514)/12 = 361.67", got)
	}
}

func twoDests() []Dest {
	return []Dest{
		{Addr: netip.MustParseAddr("198.18.0.101"), MAC: net.HardwareAddr{2, 0, 0, 0, 1, 1}},
		{Addr: netip.MustParseAddr("198.18.0.102"), MAC: net.HardwareAddr{2, 0, 0, 0, 1, 2}},
	}
}

// Each thread of a fan-out sender writes its own destination into its
// pktgen entry and its frames.
func TestThreadDestinations(t *testing.T) {
	c := baseConfig()
	c.ThreadDst = twoDests()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	for i, d := range c.ThreadDst {
		cmds := strings.Join(c.Commands(i), "\n")
		if !strings.Contains(cmds, "dst_min "+d.Addr.String()) || !strings.Contains(cmds, "dst_max "+d.Addr.String()) || !strings.Contains(cmds, "dst_mac "+d.MAC.String()) {
			t.Errorf("thread %d commands:\n%s", i, cmds)
		}
		f, err := BuildFrame(&c, i, net.HardwareAddr{2, 0, 0, 0, 0, 1})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(f.Bytes[0:6], d.MAC) || netip.AddrFrom4([4]byte(f.Bytes[30:34])) != d.Addr {
			t.Errorf("thread %d frame: dst MAC %x, dst IP %v", i, f.Bytes[0:6], f.Bytes[30:34])
		}
	}
	if c.DstMin != netip.MustParseAddr("198.18.0.2") {
		t.Errorf("ForThread changed the config: dst_min %s", c.DstMin)
	}
}
