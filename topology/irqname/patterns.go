package irqname

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// pattern is one action-name format. expr is anchored (^…$) when compiled and
// may use these placeholders:
//
//	{iface}   the netdev name, quoted; the pattern is skipped when Device.Iface is ""
//	{virtio}  the virtio device name, quoted; skipped when Device.VirtioDev is ""
//	{bdf}     any PCI address, captured; compared with Device.BDF when that is set
//	{q}       the queue (or vector) number; required in Queue patterns
//	{dir}     TxRx, Rx/rx or Tx/tx: the direction of a Queue pattern
type pattern struct {
	family string
	kind   Kind
	dir    Dir    // Queue patterns without {dir}: the fixed direction
	expr   string // see above
	reason string // Control/Shared: why the vector is not pinned per queue
	// drivers is set when the name carries no iface, BDF or virtio device:
	// it is then claimed only when Device.Driver is one of these.
	drivers []string
}

const (
	reasonMisc     = "control vector (misc)"
	reasonMailbox  = "mailbox vector"
	reasonFdir     = "flow director"
	reasonLink     = "link/mailbox vector"
	reasonShared   = "shared by all virtqueues: cannot pin per queue"
	reasonMlx5Comb = "single vector for async events and all completions: cannot pin per queue"
)

// patterns is tried in order for every name; the first match wins. Sources
// are the drivers' request_irq name formats (see the package documentation).
var patterns = []pattern{
	// mlx5_core: pci_irq.c, "%s@pci:%s" with mlx5_comp%d / mlx5_async%d.
	{family: "mlx5", kind: Queue, dir: TxRx, expr: `mlx5_comp{q}@pci:{bdf}`},
	{family: "mlx5", kind: Control, expr: `mlx5_async\d*@pci:{bdf}`, reason: "mlx5 async event queue"},
	{family: "mlx5", kind: Control, expr: `mlx5_async_eq@pci:{bdf}`, reason: "mlx5 async event queue"},
	{family: "mlx5", kind: Control, expr: `mlx5_cmd_eq@pci:{bdf}`, reason: "mlx5 command event queue"},
	{family: "mlx5", kind: Control, expr: `mlx5_pages_eq@pci:{bdf}`, reason: "mlx5 pages event queue"},
	{family: "mlx5", kind: Shared, expr: `mlx5_combined\d*@pci:{bdf}`, reason: reasonMlx5Comb},

	// mlx4: eq.c, "mlx4-%d@%s" (newer) and "mlx4-comp-%d@pci:%s" (older).
	{family: "mlx4", kind: Queue, dir: TxRx, expr: `mlx4-{q}@(?:pci:)?{bdf}`},
	{family: "mlx4", kind: Queue, dir: TxRx, expr: `mlx4-comp-{q}@pci:{bdf}`},
	{family: "mlx4", kind: Control, expr: `mlx4-async@(?:pci:)?{bdf}`, reason: "mlx4 async event queue"},

	// i40e/ice/iavf: "%s-%s-%d", basename "<drv>-<iface>", "TxRx"/"rx"/"tx";
	// idpf: "%s-%s-%s-%d", drv, iface, "TxRx"/"Rx"/"Tx", vector.
	{family: "intel", kind: Queue, expr: `(?:i40e|ice|idpf|iecm|iavf|i40evf)-{iface}-{dir}-{q}`},
	{family: "intel", kind: Control, expr: `(?:i40e|ice)-{bdf}:misc`, reason: reasonMisc},
	{family: "intel", kind: Control, expr: `(?:i40e|ice)-{bdf}:fdir-TxRx-\d+`, reason: reasonFdir},
	{family: "intel", kind: Control, expr: `(?:i40e|ice)-{bdf}:ctrl-TxRx-\d+`, reason: "control VSI (flow director)"},
	{family: "intel", kind: Control, expr: `(?:i40e|ice)-{bdf}:.+`, reason: "control vector"},
	{family: "intel", kind: Control, expr: `(?:iavf|i40evf)-{bdf}:mbx`, reason: reasonMailbox},
	{family: "intel", kind: Control, expr: `(?:i40e|ice|idpf|iecm)-{bdf}-Mailbox-\d+`, reason: reasonMailbox},
	{family: "intel", kind: Control, expr: `(?:idpf|iecm)-Mailbox-\d+`, reason: reasonMailbox, drivers: []string{"idpf", "iecm"}},

	// ixgbe/ixgbevf/igb/igbvf/igc/alx/bnxt_en/old hns3: "%s-TxRx-%d" with the
	// netdev name; unpaired vectors "%s-rx-%d"/"%s-tx-%d" (hns3: "Rx"/"Tx").
	{family: "txrx", kind: Queue, dir: TxRx, expr: `{iface}-TxRx-{q}`},
	{family: "split", kind: Queue, expr: `{iface}-{dir}-{q}`},
	{family: "txrx", kind: Control, expr: `{iface}`, reason: reasonLink},
	{family: "txrx", kind: Control, expr: `{iface}-lsc`, reason: "link state change vector"},

	// ena: ena_netdev.c, "%s-Tx-Rx-%d" and "ena-mgmnt@pci:%s".
	{family: "ena", kind: Queue, dir: TxRx, expr: `{iface}-Tx-Rx-{q}`},
	{family: "ena", kind: Control, expr: `ena-mgmnt@pci:{bdf}`, reason: "ena management vector"},

	// gve: "gve-ntfy-blk%d@pci:%s" (>= v1.4); the in-kernel v1.0 used the
	// netdev name before registration, so it printed a literal "eth%d".
	{family: "gve", kind: Queue, dir: TxRx, expr: `gve-ntfy-blk{q}@pci:{bdf}`},
	{family: "gve", kind: Queue, dir: TxRx, expr: `{iface}-ntfy-block\.{q}`},
	{family: "gve", kind: Queue, dir: TxRx, expr: `eth%d-ntfy-block\.{q}`, drivers: []string{"gve"}},
	{family: "gve", kind: Control, expr: `gve-mgmnt@pci:{bdf}`, reason: "gve management vector"},
	{family: "gve", kind: Control, expr: `{iface}-mgmnt`, reason: "gve management vector"},
	{family: "gve", kind: Control, expr: `eth%d-mgmnt`, reason: "gve management vector", drivers: []string{"gve"}},

	// virtio-pci: "%s-%s", dev_name(vdev), vq name; virtio_net names its
	// queues "input.%u"/"output.%u" and "control".
	{family: "virtio", kind: Queue, dir: Rx, expr: `{virtio}-input\.{q}`},
	{family: "virtio", kind: Queue, dir: Tx, expr: `{virtio}-output\.{q}`},
	{family: "virtio", kind: Shared, expr: `{virtio}-virtqueues`, reason: reasonShared},
	{family: "virtio", kind: Control, expr: `{virtio}-config`, reason: "virtio configuration-change vector"},
	{family: "virtio", kind: Control, expr: `{virtio}-control`, reason: "virtio-net control virtqueue"},

	// sfc: efx_get_channel_name, "%s%s-%d" with "", "-rx", "-tx" or "-xdp"
	// (-rx/-tx are the split family above); ptp channel "%s-ptp".
	{family: "sfc", kind: Queue, dir: TxRx, expr: `{iface}-{q}`},
	{family: "sfc", kind: Control, expr: `{iface}-xdp-\d+`, reason: "XDP transmit channel"},
	{family: "sfc", kind: Control, expr: `{iface}-ptp`, reason: "PTP channel"},

	// hns3: hns3_enet.c, "%s-%s-%s-%d", "hns3", pci_name, "TxRx"/"Rx"/"Tx";
	// misc vector from hclge/hclgevf: "%s-misc-%s", module name, pci_name.
	{family: "hns3", kind: Queue, expr: `hns3-{bdf}-{dir}-{q}`},
	{family: "hns3", kind: Control, expr: `(?:hclge|hclgevf)-misc-{bdf}`, reason: reasonMisc},
	{family: "hns3", kind: Control, expr: `hns3-{bdf}-misc`, reason: reasonMisc},
	{family: "hns3", kind: Control, expr: `(?:hclge|hclgevf)_misc`, reason: reasonMisc, drivers: []string{"hns3"}},

	// qede/bnx2x: "%s-fp-%d".
	{family: "fp", kind: Queue, dir: TxRx, expr: `{iface}-fp-{q}`},

	// nfp/vmxnet3/octeontx2: "%s-rxtx-%d"; vmxnet3 "%s-event-%d"; nfp "%s-exn".
	{family: "rxtx", kind: Queue, dir: TxRx, expr: `{iface}-rxtx-{q}`},
	{family: "rxtx", kind: Control, expr: `{iface}-event-\d+`, reason: "vmxnet3 event vector"},
	{family: "rxtx", kind: Control, expr: `{iface}-exn`, reason: "exception vector"},

	// mana: gdma_main.c, "mana_q%d@pci:%s", "mana_hwc@pci:%s"; the first
	// driver named every vector "mana_intr".
	{family: "mana", kind: Queue, dir: TxRx, expr: `mana_q{q}@pci:{bdf}`},
	{family: "mana", kind: Control, expr: `mana_hwc@pci:{bdf}`, reason: "mana hardware channel"},
	{family: "mana", kind: Control, expr: `mana_intr`, reason: "old mana name without a queue index", drivers: []string{"mana"}},
}

// Generic sub-expressions substituted for placeholders.
const (
	bdfExpr = `(?P<bdf>[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])`
	qExpr   = `(?P<q>[0-9]+)`
	dirExpr = `(?P<dir>TxRx|Rx|Tx|rx|tx)`
)

// rule is a pattern compiled for one Device.
type rule struct {
	*pattern
	re                   *regexp.Regexp
	qIdx, dirIdx, bdfIdx int // submatch indexes; -1 when absent
}

// matcher holds the patterns compiled for one Device.
type matcher struct {
	dev   Device
	rules []rule
}

func newMatcher(d Device) *matcher {
	subst := strings.NewReplacer(
		"{iface}", regexp.QuoteMeta(d.Iface),
		"{virtio}", regexp.QuoteMeta(d.VirtioDev),
		"{bdf}", bdfExpr,
		"{q}", qExpr,
		"{dir}", dirExpr,
	)
	m := &matcher{dev: d}
	for i := range patterns {
		p := &patterns[i]
		if strings.Contains(p.expr, "{iface}") && d.Iface == "" ||
			strings.Contains(p.expr, "{virtio}") && d.VirtioDev == "" ||
			len(p.drivers) > 0 && !slices.Contains(p.drivers, d.Driver) {
			continue
		}
		re, err := regexp.Compile("^(?:" + subst.Replace(p.expr) + ")$")
		if err != nil { // only a name that is not valid UTF-8 gets here
			continue
		}
		m.rules = append(m.rules, rule{
			pattern: p,
			re:      re,
			qIdx:    re.SubexpIndex("q"),
			dirIdx:  re.SubexpIndex("dir"),
			bdfIdx:  re.SubexpIndex("bdf"),
		})
	}
	return m
}

// match classifies one non-empty name.
func (m *matcher) match(name string) Match {
	for i := range m.rules {
		r := &m.rules[i]
		sm := r.re.FindStringSubmatch(name)
		if sm == nil {
			continue
		}
		if r.bdfIdx >= 0 && m.dev.BDF != "" && !strings.EqualFold(sm[r.bdfIdx], m.dev.BDF) {
			return unknown(name, "belongs to another PCI function "+sm[r.bdfIdx])
		}
		res := Match{Name: name, Kind: r.kind, Family: r.family, Queue: -1, Reason: r.reason}
		if r.kind == Queue {
			n, err := strconv.Atoi(sm[r.qIdx])
			if err != nil { // out of range: no real queue
				continue
			}
			res.Queue, res.Dir = n, r.dir
			if r.dirIdx >= 0 {
				res.Dir = parseDir(sm[r.dirIdx])
			}
		}
		return res
	}
	return unknown(name, "not a queue vector of "+m.dev.label())
}

func parseDir(s string) Dir {
	switch s {
	case "rx", "Rx":
		return Rx
	case "tx", "Tx":
		return Tx
	}
	return TxRx
}

// matchers caches compiled matchers, so that MatchName called once per
// /proc/interrupts line does not recompile the table for every line.
var matchers struct {
	sync.Mutex
	m map[Device]*matcher
}

const maxCachedMatchers = 32

func matcherFor(d Device) *matcher {
	matchers.Lock()
	defer matchers.Unlock()
	if m, ok := matchers.m[d]; ok {
		return m
	}
	if matchers.m == nil || len(matchers.m) >= maxCachedMatchers {
		matchers.m = make(map[Device]*matcher)
	}
	m := newMatcher(d)
	matchers.m[d] = m
	return m
}
