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

func TestCheckPause(t *testing.T) {
	for _, tc := range []struct {
		name string
		nic  *fakeNIC
		want verdict
	}{
		{"off", &fakeNIC{}, verdict{Pass, "", "", []string{"ethtool -a eth1 (ETHTOOL_GPAUSEPARAM): autoneg off rx off tx off"}}},
		{"all on", &fakeNIC{pause: ethtool.Pause{Autoneg: true, RX: true, TX: true}},
			verdict{Warn, "ethtool -A eth1 autoneg off rx off tx off", FixFlowControl, []string{"autoneg on rx on tx on"}}},
		{"autoneg only", &fakeNIC{pause: ethtool.Pause{Autoneg: true}},
			verdict{Warn, "ethtool -A eth1 autoneg off rx off tx off", FixFlowControl, []string{"autoneg on rx off tx off"}}},
		{"tx only", &fakeNIC{pause: ethtool.Pause{TX: true}},
			verdict{Warn, "ethtool -A eth1 autoneg off rx off tx off", FixFlowControl, nil}},
		{"no pause (veth)", &fakeNIC{pauseErr: errNotExposed}, verdict{Pass, "", "", []string{"the driver does not expose it", "operation not supported"}}},
		{"unreadable", &fakeNIC{pauseErr: errors.New("ethtool pause parameters of eth1: no such device")},
			verdict{Warn, "", "", []string{"not readable", "no such device"}}},
	} {
		for _, role := range Roles { // a receiver and a sender alike
			tc.want.test(t, tc.name+" "+string(role), checkPause(testEnv(t, tc.nic, role, "ixgbe")))
		}
	}
	verdict{Warn, "", "", []string{"not readable", "a snapshot or fixture"}}.test(t, "no ethtool", checkPause(testEnv(t, nil, RoleReceiver, "ixgbe")))
}

func TestCheckCoalesce(t *testing.T) {
	for _, tc := range []struct {
		name string
		co   ethtool.Coalesce
		err  error
		want verdict
	}{
		{"virtio_net without notification coalescing", ethtool.Coalesce{RXMaxFrames: 1, TXMaxFrames: 1}, nil,
			verdict{Pass, "", "", []string{"adaptive-rx off adaptive-tx off rx-usecs 0 rx-frames 1 tx-usecs 0 tx-frames 1", "≤ 10 µs"}}},
		{"mlx5 defaults", mlx5Coalesce, nil,
			verdict{Warn, "ethtool -C eth1 adaptive-rx off adaptive-tx off rx-usecs 0 rx-frames 1", FixCoalescing, []string{"adaptive-rx on adaptive-tx on rx-usecs 8 rx-frames 128"}}},
		{"adaptive tx only", ethtool.Coalesce{UseAdaptiveTX: true, RXUsecs: 3}, nil,
			verdict{Warn, "ethtool -C eth1 adaptive-tx off rx-usecs 0", FixCoalescing, nil}},
		{"rx-usecs at the threshold", ethtool.Coalesce{RXUsecs: 10, TXUsecs: 64}, nil, verdict{Pass, "", "", []string{"rx-usecs 10"}}},
		{"rx-usecs above it (i40e static)", ethtool.Coalesce{RXUsecs: 50, TXUsecs: 50}, nil,
			verdict{Warn, "ethtool -C eth1 rx-usecs 0", FixCoalescing, nil}},
		{"rx-frames counted", ethtool.Coalesce{RXUsecs: 64, RXMaxFrames: 32}, nil,
			verdict{Warn, "ethtool -C eth1 rx-usecs 0 rx-frames 1", FixCoalescing, nil}},
		{"not exposed", ethtool.Coalesce{}, errNotExposed, verdict{Pass, "", "", []string{"does not expose"}}},
		{"unreadable", ethtool.Coalesce{}, errors.New("permission denied"), verdict{Warn, "", "", []string{"not readable (permission denied)"}}},
	} {
		for _, role := range Roles {
			tc.want.test(t, tc.name+" "+string(role), checkCoalesce(testEnv(t, &fakeNIC{coalesce: tc.co, coalErr: tc.err}, role, "mlx5_core")))
		}
	}
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

func TestCheckRings(t *testing.T) {
	short := ethtool.Rings{RX: 256, RXMax: 4096, TX: 512, TXMax: 4096}
	for _, tc := range []struct {
		name string
		g    ethtool.Rings
		err  error
		role Role
		want verdict
	}{
		{"receiver short", short, nil, RoleReceiver, verdict{Warn, "ethtool -G eth1 rx 4096", FixRings, []string{"ethtool -g eth1 (ETHTOOL_GRINGPARAM): rx 256/4096 tx 512/4096"}}},
		{"sender short", short, nil, RoleSender, verdict{Warn, "ethtool -G eth1 tx 4096", FixRings, nil}},
		{"both short", short, nil, RoleBoth, verdict{Warn, "ethtool -G eth1 rx 4096 tx 4096", FixRings, nil}},
		{"receiver at max, tx short", ethtool.Rings{RX: 4096, RXMax: 4096, TX: 512, TXMax: 4096}, nil, RoleReceiver, verdict{Pass, "", "", []string{"rx 4096/4096"}}},
		{"sender at max, rx short", ethtool.Rings{RX: 256, RXMax: 4096, TX: 4096, TXMax: 4096}, nil, RoleSender, verdict{Pass, "", "", nil}},
		{"virtio_net at its queue size", ethtool.Rings{RX: 256, RXMax: 256, TX: 256, TXMax: 256}, nil, RoleBoth, verdict{Pass, "", "", []string{"rx 256/256 tx 256/256"}}},
		{"no maximum reported", ethtool.Rings{RX: 256, TX: 256}, nil, RoleBoth, verdict{Pass, "", "", nil}},
		{"not exposed", ethtool.Rings{}, errNotExposed, RoleReceiver, verdict{Pass, "", "", []string{"does not expose"}}},
		{"unreadable", ethtool.Rings{}, errors.New("timed out"), RoleReceiver, verdict{Warn, "", "", []string{"not readable"}}},
	} {
		tc.want.test(t, tc.name, checkRings(testEnv(t, &fakeNIC{rings: tc.g, ringsErr: tc.err}, tc.role, "ice")))
	}
}

func features(on ...string) []ethtool.Feature {
	var fs []ethtool.Feature
	for _, o := range offloadNames {
		fs = append(fs, ethtool.Feature{Name: o.feature, Available: true, Requested: slices.Contains(on, o.feature), Active: slices.Contains(on, o.feature)})
	}
	return fs
}

func TestCheckOffloads(t *testing.T) {
	lroFixed := features("rx-lro")
	for i := range lroFixed {
		if lroFixed[i].Name == "rx-lro" {
			lroFixed[i].Available, lroFixed[i].Fixed = false, true
		}
	}
	for _, tc := range []struct {
		name string
		fs   []ethtool.Feature
		err  error
		role Role
		want verdict
	}{
		{"receiver, GRO alone", features("rx-gro", "tx-tcp-segmentation", "tx-generic-segmentation"), nil, RoleReceiver,
			verdict{Pass, "", "", []string{"rx-gro on, rx-lro off, rx-gro-hw off, rx-udp-gro-forwarding off, rx-gro-list off, tx-tcp-segmentation on, tx-generic-segmentation on", "GRO leaves the test's UDP frames unmerged"}}},
		{"receiver, GRO with UDP forwarding", features("rx-gro", "rx-udp-gro-forwarding"), nil, RoleReceiver, verdict{Warn, "ethtool -K eth1 gro off", "", nil}},
		{"receiver, GRO with fraglist", features("rx-gro", "rx-gro-list"), nil, RoleBoth, verdict{Warn, "ethtool -K eth1 gro off", "", nil}},
		{"receiver, LRO", features("rx-gro", "rx-lro"), nil, RoleReceiver, verdict{Warn, "ethtool -K eth1 lro off", "", nil}},
		{"receiver, LRO and UDP GRO", features("rx-gro", "rx-lro", "rx-gro-list"), nil, RoleReceiver, verdict{Warn, "ethtool -K eth1 lro off gro off", "", nil}},
		{"receiver, LRO fixed on", lroFixed, nil, RoleReceiver, verdict{Warn, "the driver does not let lro be turned off ([fixed]): count on a NIC whose driver does", "", []string{"rx-lro on [fixed]"}}},
		{"sender, LRO and UDP GRO", features("rx-gro", "rx-lro", "rx-gro-list", "tx-tcp-segmentation"), nil, RoleSender, verdict{Pass, "", "", []string{"a sender"}}},
		{"older kernel", []ethtool.Feature{{Name: "rx-gro", Available: true, Active: true}}, nil, RoleReceiver, verdict{Pass, "", "", []string{"rx-gro-list absent"}}},
		{"not exposed", nil, errNotExposed, RoleReceiver, verdict{Pass, "", "", []string{"does not expose"}}},
		{"unreadable", nil, errors.New("bad"), RoleReceiver, verdict{Warn, "", "", []string{"not readable (bad)"}}},
	} {
		tc.want.test(t, tc.name, checkOffloads(testEnv(t, &fakeNIC{features: tc.fs, featErr: tc.err}, tc.role, "mlx5_core")))
	}
}

func TestCheckLink(t *testing.T) {
	for _, tc := range []struct {
		name     string
		l        ethtool.Link
		err      error
		physical string
		want     verdict
	}{
		{"veth", ethtool.Link{SpeedMbps: 10000, Duplex: "full", Port: "tp"}, nil, "",
			verdict{Pass, "", "", []string{"10000Mb/s full duplex autoneg off port tp", "virtual interface"}}},
		{"25G full", ethtool.Link{SpeedMbps: 25000, Duplex: "full", Autoneg: true, Port: "da"}, nil, "ice", verdict{Pass, "", "", []string{"25000Mb/s full duplex autoneg on port da"}}},
		{"forced 10G", ethtool.Link{SpeedMbps: 10000, Duplex: "full", Port: "fibre"}, nil, "ixgbe", verdict{Pass, "", "", nil}},
		{"half duplex", ethtool.Link{SpeedMbps: 100, Duplex: "half", Autoneg: true, Port: "tp"}, nil, "e1000e",
			verdict{Fail, "ethtool -s eth1 duplex full autoneg on; if it comes up at half duplex again, check the cable and the switch port", "", []string{"100Mb/s half duplex"}}},
		{"down", ethtool.Link{SpeedMbps: -1, Duplex: "unknown", Autoneg: true}, nil, "ixgbe",
			verdict{Warn, "ip link set eth1 up, then check the cable, the transceiver and the switch port (a link of unknown speed is down or not negotiated)", "", []string{"unknown speed", "/sys/class/net/eth1/operstate: down"}}},
		{"virtio_net without a speed", ethtool.Link{SpeedMbps: -1, Duplex: "unknown"}, nil, "virtio_net",
			verdict{Warn, "ethtool -s eth1 speed <the host link's Mb/s> duplex full (virtio_net reports the speed it is given)", "", nil}},
		{"virtual, unknown speed", ethtool.Link{SpeedMbps: -1, Duplex: "unknown"}, nil, "", verdict{Pass, "", "", []string{"nominal"}}},
		{"not exposed", ethtool.Link{}, errNotExposed, "ixgbe", verdict{Pass, "", "", []string{"does not expose", "/sys/class/net/eth1/speed: -1"}}},
		{"unreadable", ethtool.Link{}, errors.New("bad"), "ixgbe", verdict{Warn, "", "", []string{"not readable (bad)"}}},
	} {
		tc.want.test(t, tc.name, checkLink(testEnv(t, &fakeNIC{link: tc.l, linkErr: tc.err}, RoleReceiver, tc.physical)))
	}
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
