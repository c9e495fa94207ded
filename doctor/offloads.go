package doctor

import (
	"fmt"
	"strings"

	"github.com/linerate/linerate/internal/ethtool"
)

// offloadNames are the offloads the check reads: the kernel's feature
// name (ETH_SS_FEATURES) and the one `ethtool -K` takes.
var offloadNames = []struct{ feature, short string }{
	{"rx-gro", "gro"},
	{"rx-lro", "lro"},
	{"rx-gro-hw", "rx-gro-hw"},
	{"rx-udp-gro-forwarding", "rx-udp-gro-forwarding"},
	{"rx-gro-list", "rx-gro-list"},
	{"tx-tcp-segmentation", "tso"},
	{"tx-generic-segmentation", "gso"},
}

func featureMap(fs []ethtool.Feature) map[string]ethtool.Feature {
	m := make(map[string]ethtool.Feature, len(fs))
	for _, f := range fs {
		m[f.Name] = f
	}
	return m
}

const (
	lroWhy = "LRO merges TCP segments in the NIC before any counter sees them (the link's counters then count one frame for many), " +
		"and drivers such as mlx5 refuse a native XDP program while it is on: the receiver then counts in generic mode, after the stack " +
		"has built an skb per frame, and counts fewer frames per second than the NIC delivers. "
	groWhy = "GRO with rx-udp-gro-forwarding or rx-gro-list merges the test's UDP frames of a flow into super-frames before the stack: " +
		"the receiver's AF_PACKET and generic-XDP counters then count merged frames, not packets (native XDP counts before GRO). "
	offloadsWhy = "The receive offloads decide whether a receiver counts packets or merged frames; TSO and GSO split the stack's own large sends " +
		"and never touch the frames pktgen or the XDP engine hand the driver at their wire size."
)

// checkOffloads reads GRO, LRO, TSO and GSO and what they change for a
// small-packet test: on a receiver, LRO on is a WARN (it merges before
// any counter); GRO on is a WARN only with rx-udp-gro-forwarding or
// rx-gro-list on, without which GRO leaves UDP frames alone; TSO and
// GSO are evidence, never a warning. There is no fix class: the fix is
// the `ethtool -K` command.
func checkOffloads(e *env) Check {
	c := Check{Title: "Offloads that change what a small-packet test measures (GRO, LRO, TSO, GSO)", Why: offloadsWhy}
	return paramCheck(e, c, "-k ", "ETHTOOL_GFEATURES", NIC.Features, offloadStates, func(fs []ethtool.Feature, c *Check) {
		if !e.o.Role.receives() {
			c.Evidence = append(c.Evidence, "a sender: the receive offloads change only the round trips it counts, which native XDP counts before GRO")
			return
		}
		judgeOffloads(e.o.Iface, featureMap(fs), c)
	})
}

// offloadStates is each offload the check reads, as `ethtool -k` says it:
// "rx-gro on, rx-lro off [fixed], ..., rx-gro-list absent".
func offloadStates(fs []ethtool.Feature) string {
	by := featureMap(fs)
	var states []string
	for _, o := range offloadNames {
		f, ok := by[o.feature]
		switch {
		case !ok:
			states = append(states, o.feature+" absent")
		case f.Fixed:
			states = append(states, o.feature+" "+onOff(f.Active)+" [fixed]")
		default:
			states = append(states, o.feature+" "+onOff(f.Active))
		}
	}
	return strings.Join(states, ", ")
}

// judgeOffloads is a receiver's verdict: LRO on, or GRO on with UDP GRO
// forwarding or fraglist, is a WARN whose fix turns them off.
func judgeOffloads(iface string, by map[string]ethtool.Feature, c *Check) {
	var off, why, fixed, found []string
	if f := by["rx-lro"]; f.Active {
		found = append(found, "rx-lro on")
		why = append(why, lroWhy)
		if f.Fixed {
			fixed = append(fixed, "lro")
		} else {
			off = append(off, "lro")
		}
	}
	udp := by["rx-udp-gro-forwarding"].Active || by["rx-gro-list"].Active
	if f := by["rx-gro"]; f.Active && udp {
		with := "rx-udp-gro-forwarding"
		if !by[with].Active {
			with = "rx-gro-list"
		}
		found = append(found, "rx-gro on with "+with+" on")
		why = append(why, groWhy)
		off = append(off, "gro")
	} else if f.Active {
		c.Evidence = append(c.Evidence, "rx-gro on but rx-udp-gro-forwarding and rx-gro-list off: GRO leaves the test's UDP frames unmerged")
	}
	if len(why) == 0 {
		return
	}
	c.Status = Warn
	lead(c, fmt.Sprintf("%s: %s (ethtool -k)", iface, strings.Join(found, ", ")))
	c.Why = strings.Join(why, "") + offloadsWhy
	if len(off) > 0 {
		c.Fix = fmt.Sprintf("ethtool -K %s %s off", iface, strings.Join(off, " off "))
	} else {
		c.Fix = fmt.Sprintf("the driver does not let %s be turned off ([fixed]): count on a NIC whose driver does", strings.Join(fixed, ", "))
	}
}
