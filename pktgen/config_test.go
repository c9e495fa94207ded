package pktgen

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
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
		{"size and imix", func(c *Config) { c.IMIX = IMIX{{64, 7}} }, "one of pkt_size"},
		{"imix weight", func(c *Config) { c.PktSize, c.IMIX = 0, IMIX{{64, 0}} }, "imix weight"},
		{"imix and clone", func(c *Config) { c.PktSize, c.IMIX, c.CloneSkb = 0, IMIX{{64, 1}}, 5 }, "clone_skb: must be 0 with imix"},
		{"range inverted", func(c *Config) { c.PktSize, c.MinPktSize, c.MaxPktSize = 0, 200, 100 }, "range 200-100"},
		{"two rates", func(c *Config) { c.RatePPS, c.DelayNS = 10, 10 }, "one of delay"},
		{"many threads on few cpus", func(c *Config) { c.CPUs = []int{0, 1, 0, 1, 0, 1, 0, 1} }, "cpus: cpus 0, 1 twice: one thread per CPU (8 threads, 2 distinct CPUs), unless queues"},
		{"devices per thread, a queue each", func(c *Config) { c.CPUs, c.Queues, c.Flags = []int{2, 3, 2, 3}, []int{0, 1, 2, 3}, nil }, ""},
		{"threads of two cpus on one queue", func(c *Config) { c.CPUs, c.Queues, c.Flags = []int{2, 3}, []int{0, 0}, nil }, ""},
		{"one queue twice on a thread", func(c *Config) { c.CPUs, c.Queues, c.Flags = []int{2, 3, 2, 3}, []int{0, 1, 0, 1}, nil }, "queues: cpu 2 queue 0, cpu 3 queue 1 twice: the streams on one CPU need a TX queue each"},
		{"queues short", func(c *Config) { c.CPUs, c.Queues, c.Flags = []int{2, 2}, []int{0}, nil }, "queues: 1 per-thread queues for 2 CPUs"},
		{"queue out of range", func(c *Config) { c.Queues, c.Flags = []int{0, 65536}, nil }, "queues: queue 65536 out of range 0-65535"},
		{"queues and a queue_map range", func(c *Config) { c.Queues, c.Flags, c.HasQueueMap = []int{0, 1}, nil, true }, "queues: 2 per-thread queues for 2 CPUs (and not with a queue_map range)"},
		{"queues and QUEUE_MAP_CPU", func(c *Config) { c.Queues = []int{0, 1} }, "queues: per-thread queues with flag QUEUE_MAP_CPU: the flag overrides"},
		{"queues and QUEUE_MAP_RND", func(c *Config) { c.Queues, c.Flags = []int{0, 1}, []string{"QUEUE_MAP_RND"} }, "flag QUEUE_MAP_RND"},
		{"queues and QUEUE_MAP_CPU cleared", func(c *Config) { c.Queues, c.Flags = []int{0, 1}, []string{"QUEUE_MAP_CPU", "!QUEUE_MAP_CPU"} }, ""},
		{"per-device rates", func(c *Config) {
			c.CPUs, c.Queues, c.Flags, c.Count, c.Rates = []int{2, 2, 2}, []int{0, 1, 2}, nil, 0, SplitRate(1001, 3)
			c.Duration = time.Second
		}, ""},
		{"per-device rates short", func(c *Config) { c.CPUs, c.Queues, c.Flags, c.Rates = []int{2, 2}, []int{0, 1}, nil, []uint64{7} }, "rates: 1 per-thread rates for 2 CPUs"},
		{"per-device counts short", func(c *Config) { c.CPUs, c.Queues, c.Flags, c.Counts = []int{2, 2}, []int{0, 1}, nil, []uint64{7} }, "counts: 1 per-thread counts for 2 CPUs"},
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
	c6.IMIX, c6.PktSize = IMIX{{82, 7}, {574, 4}, {1518, 1}}, 0 // sizes with FCS
	want6 := []string{"count 5000", "imix_weights 78,7 570,4 1514,1", "delay 0", "dst6 2001:2::2", "src6 2001:2::b", "dst_mac 02:00:00:00:00:02"}
	if diff := cmp.Diff(want6, c6.Commands(1)); diff != "" {
		t.Errorf("ipv6 imix commands (-want +got):\n%s", diff)
	}
	if got := c6.FrameBytes(); got < 361.66 || got > 361.67 {
		t.Errorf("imix mean frame %v, want (78*7+570*4+1514)/12 = 361.67", got)
	}
}

// Several devices on one pktgen thread: each its own entry (named by CPU
// and queue), queue, share of the flow's rate (the remainder on the
// first) and source address, so that each is a stream of its own.
func TestDevicesPerThread(t *testing.T) {
	c := baseConfig()
	c.Device, c.Flags, c.Count, c.Duration = "data0", nil, 0, time.Second
	c.CPUs, c.Queues, c.Rates = []int{2, 3, 2, 3}, []int{0, 1, 2, 3}, SplitRate(1003, 4)
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := c.ThreadCPUs(); !slices.Equal(got, []int{2, 3}) {
		t.Errorf("threads %v, want [2 3]", got)
	}
	var sum, period uint64
	for i, want := range []struct {
		entry string
		rate  uint64
		src   string
	}{{"data0@2q0", 251, "198.18.1.1"}, {"data0@3q1", 251, "198.18.1.2"}, {"data0@2q2", 251, "198.18.1.3"}, {"data0@3q3", 250, "198.18.1.4"}} {
		if got := c.EntryName(i); got != want.entry {
			t.Errorf("device %d: entry %s, want %s", i, got, want.entry)
		}
		if q, ok := c.QueueOf(i); !ok || q != c.Queues[i] {
			t.Errorf("device %d: queue %d %v", i, q, ok)
		}
		sum += c.RateOf(i)
		num, den := c.Period(i)
		period = num / den
		wantCmds := []string{
			"count 0", "pkt_size 60", fmt.Sprintf("delay %d", (1_000_000_000+want.rate/2)/want.rate), "dst_min 198.18.0.2", "dst_max 198.18.0.2",
			"src_min " + want.src, "src_max " + want.src, "dst_mac 02:00:00:00:00:02",
			fmt.Sprintf("queue_map_min %d", c.Queues[i]), fmt.Sprintf("queue_map_max %d", c.Queues[i]),
		}
		if diff := cmp.Diff(wantCmds, c.Commands(i)); diff != "" {
			t.Errorf("device %d commands (-want +got):\n%s", i, diff)
		}
	}
	if sum != 1003 || period != 1e9/250 {
		t.Errorf("devices' rates sum to %d pps (want the flow's 1003), last period %d ns", sum, period)
	}
	// Without queues the entries stay "<dev>@<cpu>".
	c.Queues, c.CPUs, c.Rates = nil, []int{2, 3}, nil
	if got := c.EntryName(1); got != "data0@3" {
		t.Errorf("entry without queues %s", got)
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
