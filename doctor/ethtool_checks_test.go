package doctor

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/linerate/linerate/internal/ethtool"
)

// verdict is what a check case wants: status, fix and class exactly, and
// each evidence substring in some item.
type verdict struct {
	status   Status
	fix      string
	class    FixClass
	evidence []string
}

func (w verdict) test(t *testing.T, name string, c Check) {
	t.Helper()
	if c.Status != w.status || c.Fix != w.fix || c.FixClass != w.class {
		t.Errorf("%s: %s fix %q class %q, want %s fix %q class %q; evidence %q", name, c.Status, c.Fix, c.FixClass, w.status, w.fix, w.class, c.Evidence)
	}
	for _, want := range w.evidence {
		if !slices.ContainsFunc(c.Evidence, func(s string) bool { return strings.Contains(s, want) }) {
			t.Errorf("%s: no evidence says %q: %q", name, want, c.Evidence)
		}
	}
	if c.Title == "" || c.Why == "" || len(c.Evidence) == 0 {
		t.Errorf("%s: title %q why %q evidence %q: each must be said", name, c.Title, c.Why, c.Evidence)
	}
	if c.Status == Pass && (c.Fix != "" || c.FixClass != "") {
		t.Errorf("%s: a PASS with a fix %q (%s)", name, c.Fix, c.FixClass)
	}
}

// checkCase is one NIC (nil: no ethtool at all) checked for a role ("":
// each role, which must all agree), on a device of the physical driver
// ("": a virtual interface).
type checkCase struct {
	name     string
	nic      *fakeNIC
	role     Role
	physical string
	want     verdict
}

func runCases(t *testing.T, check func(*env) Check, cases []checkCase) {
	t.Helper()
	for _, tc := range cases {
		roles := Roles
		if tc.role != "" {
			roles = []Role{tc.role}
		}
		for _, r := range roles {
			var nic NIC
			if tc.nic != nil {
				nic = tc.nic
			}
			tc.want.test(t, tc.name+" "+string(r), check(testEnv(t, nic, r, tc.physical)))
		}
	}
}

const pauseOff = "ethtool -A eth1 autoneg off rx off tx off"

// Flow control warns for a receiver and a sender alike.
func TestCheckPause(t *testing.T) {
	runCases(t, checkPause, []checkCase{
		{"off", &fakeNIC{}, "", "ixgbe", verdict{Pass, "", "", []string{"ethtool -a eth1 (ETHTOOL_GPAUSEPARAM): autoneg off rx off tx off"}}},
		{"all on", &fakeNIC{pause: ethtool.Pause{Autoneg: true, RX: true, TX: true}}, "", "ixgbe", verdict{Warn, pauseOff, FixFlowControl, []string{"autoneg on rx on tx on"}}},
		{"autoneg only", &fakeNIC{pause: ethtool.Pause{Autoneg: true}}, "", "ixgbe", verdict{Warn, pauseOff, FixFlowControl, []string{"autoneg on rx off tx off"}}},
		{"tx only", &fakeNIC{pause: ethtool.Pause{TX: true}}, "", "ixgbe", verdict{Warn, pauseOff, FixFlowControl, nil}},
		{"no pause (veth)", &fakeNIC{pauseErr: errNotExposed}, "", "", verdict{Pass, "", "", []string{"the driver does not expose it", "operation not supported"}}},
		{"unreadable", &fakeNIC{pauseErr: errors.New("ethtool pause parameters of eth1: no such device")}, "", "ixgbe", verdict{Warn, "", "", []string{"not readable", "no such device"}}},
		{"no ethtool", nil, RoleReceiver, "ixgbe", verdict{Warn, "", "", []string{"not readable", "a snapshot or fixture"}}},
	})
}

// Coalescing warns for every role: a sender times its round trips on
// what comes back.
func TestCheckCoalesce(t *testing.T) {
	co := func(c ethtool.Coalesce) *fakeNIC { return &fakeNIC{coalesce: c} }
	runCases(t, checkCoalesce, []checkCase{
		{"virtio_net without notification coalescing", co(ethtool.Coalesce{RXMaxFrames: 1, TXMaxFrames: 1}), "", "virtio_net",
			verdict{Pass, "", "", []string{"adaptive-rx off adaptive-tx off rx-usecs 0 rx-frames 1 tx-usecs 0 tx-frames 1", "≤ 10 µs"}}},
		{"mlx5 defaults", co(mlx5Coalesce), "", "mlx5_core",
			verdict{Warn, "ethtool -C eth1 adaptive-rx off adaptive-tx off rx-usecs 0 rx-frames 1", FixCoalescing, []string{"adaptive-rx on adaptive-tx on rx-usecs 8 rx-frames 128"}}},
		{"adaptive tx only", co(ethtool.Coalesce{UseAdaptiveTX: true, RXUsecs: 3}), "", "igb", verdict{Warn, "ethtool -C eth1 adaptive-tx off rx-usecs 0", FixCoalescing, nil}},
		{"rx-usecs at the threshold", co(ethtool.Coalesce{RXUsecs: 10, TXUsecs: 64}), "", "bnxt_en", verdict{Pass, "", "", []string{"rx-usecs 10"}}},
		{"rx-usecs above it (i40e static)", co(ethtool.Coalesce{RXUsecs: 50, TXUsecs: 50}), "", "i40e", verdict{Warn, "ethtool -C eth1 rx-usecs 0", FixCoalescing, nil}},
		{"rx-frames counted", co(ethtool.Coalesce{RXUsecs: 64, RXMaxFrames: 32}), "", "ena", verdict{Warn, "ethtool -C eth1 rx-usecs 0 rx-frames 1", FixCoalescing, nil}},
		{"not exposed", &fakeNIC{coalErr: errNotExposed}, "", "", verdict{Pass, "", "", []string{"does not expose"}}},
		{"unreadable", &fakeNIC{coalErr: errors.New("permission denied")}, "", "ice", verdict{Warn, "", "", []string{"not readable (permission denied)"}}},
	})
}

// coalesceOff keeps every field it does not mean to change.
func TestCoalesceOffKeeps(t *testing.T) {
	c := ethtool.Coalesce{UseAdaptiveRX: true, RXUsecs: 50, RXMaxFrames: 0, RXUsecsIRQ: 7, TXUsecs: 30, TXMaxFrames: 64, PktRateLow: 100, RXUsecsHigh: 90, RateSampleInterval: 2}
	w, warn := coalesceOff(c)
	want := c
	want.UseAdaptiveRX, want.RXUsecs = false, 0 // rx-frames stays 0: the driver does not count frames
	if !warn || w != want {
		t.Errorf("coalesceOff(%+v) = %+v, %v; want %+v, true", c, w, warn, want)
	}
}

// Rings warn for the direction the role depends on.
func TestCheckRings(t *testing.T) {
	rings := func(g ethtool.Rings) *fakeNIC { return &fakeNIC{rings: g} }
	short := rings(ethtool.Rings{RX: 256, RXMax: 4096, TX: 512, TXMax: 4096})
	runCases(t, checkRings, []checkCase{
		{"receiver short", short, RoleReceiver, "ice", verdict{Warn, "ethtool -G eth1 rx 4096", FixRings, []string{"ethtool -g eth1 (ETHTOOL_GRINGPARAM): rx 256/4096 tx 512/4096"}}},
		{"sender short", short, RoleSender, "ice", verdict{Warn, "ethtool -G eth1 tx 4096", FixRings, nil}},
		{"both short", short, RoleBoth, "ice", verdict{Warn, "ethtool -G eth1 rx 4096 tx 4096", FixRings, nil}},
		{"receiver at max, tx short", rings(ethtool.Rings{RX: 4096, RXMax: 4096, TX: 512, TXMax: 4096}), RoleReceiver, "ice", verdict{Pass, "", "", []string{"rx 4096/4096"}}},
		{"sender at max, rx short", rings(ethtool.Rings{RX: 256, RXMax: 4096, TX: 4096, TXMax: 4096}), RoleSender, "ice", verdict{Pass, "", "", nil}},
		{"virtio_net at its queue size", rings(ethtool.Rings{RX: 256, RXMax: 256, TX: 256, TXMax: 256}), "", "virtio_net", verdict{Pass, "", "", []string{"rx 256/256 tx 256/256"}}},
		{"no maximum reported", rings(ethtool.Rings{RX: 256, TX: 256}), "", "ice", verdict{Pass, "", "", nil}},
		{"not exposed", &fakeNIC{ringsErr: errNotExposed}, "", "", verdict{Pass, "", "", []string{"does not expose"}}},
		{"unreadable", &fakeNIC{ringsErr: errors.New("timed out")}, "", "ice", verdict{Warn, "", "", []string{"not readable"}}},
	})
}

func features(on ...string) []ethtool.Feature {
	var fs []ethtool.Feature
	for _, o := range offloadNames {
		fs = append(fs, ethtool.Feature{Name: o.feature, Available: true, Requested: slices.Contains(on, o.feature), Active: slices.Contains(on, o.feature)})
	}
	return fs
}

// The receive offloads warn on a receiver only.
func TestCheckOffloads(t *testing.T) {
	feat := func(on ...string) *fakeNIC { return &fakeNIC{features: features(on...)} }
	lroFixed := feat("rx-lro")
	for i := range lroFixed.features {
		if lroFixed.features[i].Name == "rx-lro" {
			lroFixed.features[i].Available, lroFixed.features[i].Fixed = false, true
		}
	}
	runCases(t, checkOffloads, []checkCase{
		{"receiver, GRO alone", feat("rx-gro", "tx-tcp-segmentation", "tx-generic-segmentation"), RoleReceiver, "ice", verdict{Pass, "", "", []string{
			"rx-gro on, rx-lro off, rx-gro-hw off, rx-udp-gro-forwarding off, rx-gro-list off, tx-tcp-segmentation on, tx-generic-segmentation on",
			"GRO leaves the test's UDP frames unmerged"}}},
		{"receiver, GRO with UDP forwarding", feat("rx-gro", "rx-udp-gro-forwarding"), RoleReceiver, "ice", verdict{Warn, "ethtool -K eth1 gro off", "", nil}},
		{"both, GRO with fraglist", feat("rx-gro", "rx-gro-list"), RoleBoth, "ice", verdict{Warn, "ethtool -K eth1 gro off", "", nil}},
		{"receiver, LRO", feat("rx-gro", "rx-lro"), RoleReceiver, "mlx5_core", verdict{Warn, "ethtool -K eth1 lro off", "", nil}},
		{"receiver, LRO and UDP GRO", feat("rx-gro", "rx-lro", "rx-gro-list"), RoleReceiver, "mlx5_core", verdict{Warn, "ethtool -K eth1 lro off gro off", "", nil}},
		{"receiver, LRO fixed on", lroFixed, RoleReceiver, "mlx5_core", verdict{Warn, "the driver does not let lro be turned off ([fixed]): count on a NIC whose driver does", "", []string{"rx-lro on [fixed]"}}},
		{"sender, LRO and UDP GRO", feat("rx-gro", "rx-lro", "rx-gro-list", "tx-tcp-segmentation"), RoleSender, "mlx5_core", verdict{Pass, "", "", []string{"a sender"}}},
		{"older kernel", &fakeNIC{features: []ethtool.Feature{{Name: "rx-gro", Available: true, Active: true}}}, RoleReceiver, "ixgbe", verdict{Pass, "", "", []string{"rx-gro-list absent"}}},
		{"not exposed", &fakeNIC{featErr: errNotExposed}, "", "", verdict{Pass, "", "", []string{"does not expose"}}},
		{"unreadable", &fakeNIC{featErr: errors.New("bad")}, "", "ice", verdict{Warn, "", "", []string{"not readable (bad)"}}},
	})
}

// The link is judged alike for every role.
func TestCheckLink(t *testing.T) {
	link := func(l ethtool.Link) *fakeNIC { return &fakeNIC{link: l} }
	unknown := link(ethtool.Link{SpeedMbps: -1, Duplex: "unknown"})
	runCases(t, checkLink, []checkCase{
		{"veth", link(ethtool.Link{SpeedMbps: 10000, Duplex: "full", Port: "tp"}), "", "", verdict{Pass, "", "", []string{"10000Mb/s full duplex autoneg off port tp", "virtual interface"}}},
		{"25G full", link(ethtool.Link{SpeedMbps: 25000, Duplex: "full", Autoneg: true, Port: "da"}), "", "ice", verdict{Pass, "", "", []string{"25000Mb/s full duplex autoneg on port da"}}},
		{"forced 10G", link(ethtool.Link{SpeedMbps: 10000, Duplex: "full", Port: "fibre"}), "", "ixgbe", verdict{Pass, "", "", nil}},
		{"half duplex", link(ethtool.Link{SpeedMbps: 100, Duplex: "half", Autoneg: true, Port: "tp"}), "", "e1000e",
			verdict{Fail, "ethtool -s eth1 duplex full autoneg on; if it comes up at half duplex again, check the cable and the switch port", "", []string{"100Mb/s half duplex"}}},
		{"down", link(ethtool.Link{SpeedMbps: -1, Duplex: "unknown", Autoneg: true}), "", "ixgbe",
			verdict{Warn, "ip link set eth1 up, then check the cable, the transceiver and the switch port (a link of unknown speed is down or not negotiated)", "", []string{"unknown speed", "/sys/class/net/eth1/operstate: down"}}},
		{"virtio_net without a speed", unknown, "", "virtio_net",
			verdict{Warn, "ethtool -s eth1 speed <the host link's Mb/s> duplex full (virtio_net reports the speed it is given)", "", nil}},
		{"virtual, unknown speed", unknown, "", "", verdict{Pass, "", "", []string{"nominal"}}},
		// A device whose driver exposes no link settings has an unknown
		// speed: a WARN; a virtual interface's is nominal anyway.
		{"not exposed", &fakeNIC{linkErr: errNotExposed}, "", "ixgbe", verdict{Warn,
			"update the NIC's driver or firmware (ethtool -i eth1 names them) until ethtool eth1 shows the link's speed; until then read it from the switch port", "",
			[]string{"eth1: a device whose driver exposes no link settings: its speed is unknown", "does not expose", "/sys/class/net/eth1/speed: -1"}}},
		{"not exposed, virtual", &fakeNIC{linkErr: errNotExposed}, "", "", verdict{Pass, "", "", []string{"does not expose"}}},
		{"unreadable", &fakeNIC{linkErr: errors.New("bad")}, "", "ixgbe", verdict{Warn, "", "", []string{"not readable (bad)"}}},
	})
}

func TestNICFacts(t *testing.T) {
	nic := &fakeNIC{pause: ethtool.Pause{Autoneg: true, RX: true, TX: true}, coalesce: mlx5Coalesce,
		rings: ethtool.Rings{RX: 1024, RXMax: 8192, TX: 1024, TXMax: 8192}, features: features("rx-gro", "tx-tcp-segmentation"),
		info: ethtool.DriverInfo{Driver: "mlx5_core", Firmware: "16.35.2000 (MT_0000000080)"}}
	var f Facts
	nicFacts(testEnv(t, nic, RoleBoth, "mlx5_core"), &f)
	want := Facts{Rings: "rx 1024/8192 tx 1024/8192", Coalesce: "adaptive-rx on adaptive-tx on rx-usecs 8 rx-frames 128 tx-usecs 16 tx-frames 32",
		Pause: "autoneg on rx on tx on", Offloads: "gro on lro off rx-gro-hw off rx-udp-gro-forwarding off rx-gro-list off tso on gso off",
		Firmware: "mlx5_core 16.35.2000 (MT_0000000080)"}
	if f != want {
		t.Errorf("facts\n%+v, want\n%+v", f, want)
	}
	veth := &fakeNIC{pauseErr: errNotExposed, coalErr: errNotExposed, ringsErr: errNotExposed, infoErr: errors.New("gone"), info: ethtool.DriverInfo{Driver: "veth"}}
	f = Facts{}
	nicFacts(testEnv(t, veth, RoleBoth, ""), &f)
	if want := (Facts{Rings: "unsupported", Coalesce: "unsupported", Pause: "unsupported"}); f != want {
		t.Errorf("veth facts %+v, want %+v (an unreadable one empty)", f, want)
	}
	f = Facts{}
	nicFacts(testEnv(t, nil, RoleBoth, ""), &f)
	if f != (Facts{}) {
		t.Errorf("facts without ethtool: %+v, want none", f)
	}
}

// TestFirstEvidence: a WARN's first evidence item, the one the run's
// report and warnings show, is the finding itself, not the reading it
// came from.
func TestFirstEvidence(t *testing.T) {
	for _, tc := range []struct {
		name  string
		check func(*env) Check
		nic   *fakeNIC
		role  Role
		first string
	}{
		{"coalescing", checkCoalesce, &fakeNIC{coalesce: mlx5Coalesce}, RoleReceiver, "eth1: adaptive-rx on, adaptive-tx on (ethtool -c)"},
		{"rx-usecs", checkCoalesce, &fakeNIC{coalesce: ethtool.Coalesce{RXUsecs: 50, TXUsecs: 50}}, RoleReceiver, "eth1: rx-usecs 50 above 10 µs (ethtool -c)"},
		{"rings", checkRings, &fakeNIC{rings: ethtool.Rings{RX: 256, RXMax: 4096, TX: 512, TXMax: 4096}}, RoleBoth, "eth1: rx ring 256 below its maximum 4096, tx ring 512 below its maximum 4096 (ethtool -g)"},
		{"lro", checkOffloads, &fakeNIC{features: features("rx-lro")}, RoleReceiver, "eth1: rx-lro on (ethtool -k)"},
		{"gro", checkOffloads, &fakeNIC{features: features("rx-gro", "rx-gro-list")}, RoleReceiver, "eth1: rx-gro on with rx-gro-list on (ethtool -k)"},
		{"pause", checkPause, &fakeNIC{pause: ethtool.Pause{RX: true}}, RoleReceiver, "ethtool -a eth1 (ETHTOOL_GPAUSEPARAM): autoneg off rx on tx off"},
	} {
		c := tc.check(testEnv(t, tc.nic, tc.role, "ixgbe"))
		if c.Status != Warn || len(c.Evidence) == 0 || c.Evidence[0] != tc.first {
			t.Errorf("%s: %s %q, want WARN led by %q", tc.name, c.Status, c.Evidence, tc.first)
		}
	}
}
