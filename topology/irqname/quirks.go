package irqname

import (
	"slices"
	"strings"
)

// renumber applies the set-wide numbering quirks to the Queue matches in ms,
// family by family.
func renumber(d Device, ms []Match) {
	byFamily := make(map[string][]*Match)
	for i := range ms {
		if ms[i].Kind == Queue {
			byFamily[ms[i].Family] = append(byFamily[ms[i].Family], &ms[i])
		}
	}
	for family, qs := range byFamily {
		switch {
		case family == "hns3", d.Driver == "hns3" && (family == "txrx" || family == "split"):
			// hns3 steps the TxRx counter by 2; Rx and Tx have counters of their own.
			rank(qs, true)
		case family == "intel" && isIDPF(d, qs):
			// Old idpf named vectors by MSI-X index, one counter for all directions.
			rank(qs, false)
		case family == "gve":
			gveHalves(qs)
		case family == "mlx5", family == "mlx4":
			fromOne(qs)
		case family == "split":
			pairSplit(qs)
		}
	}
}

func isIDPF(d Device, qs []*Match) bool {
	if d.Driver == "idpf" || d.Driver == "iecm" {
		return true
	}
	return strings.HasPrefix(qs[0].Name, "idpf-") || strings.HasPrefix(qs[0].Name, "iecm-")
}

// rank replaces each queue number by its rank among the distinct numbers of
// the group (per direction when perDir): 0, 2, 4, 6 become 0, 1, 2, 3.
func rank(qs []*Match, perDir bool) {
	key := func(m *Match) Dir {
		if perDir {
			return m.Dir
		}
		return ""
	}
	raws := make(map[Dir][]int)
	for _, m := range qs {
		raws[key(m)] = append(raws[key(m)], m.Queue)
	}
	for dir, ns := range raws {
		slices.Sort(ns)
		raws[dir] = slices.Compact(ns)
	}
	for _, m := range qs {
		m.Queue, _ = slices.BinarySearch(raws[key(m)], m.Queue)
	}
}

// gveHalves maps gve notification blocks to queues: with n blocks the lower
// half serves TX queues and the upper half RX queues (gve.h
// gve_tx_idx_to_ntfy / gve_rx_idx_to_ntfy).
func gveHalves(qs []*Match) {
	n := 0
	for _, m := range qs {
		n = max(n, m.Queue+1)
	}
	half := n / 2
	for _, m := range qs {
		if m.Queue < half {
			m.Dir = Tx
		} else {
			m.Dir, m.Queue = Rx, m.Queue-half
		}
	}
}

// fromOne shifts a set numbered from 1 down to 0: mlx5 kernels with dynamic
// MSI-X allocation (until "offset comp irq index in name by one") and mlx4,
// whose vector 0 is the async EQ, start their completion vectors at 1.
func fromOne(qs []*Match) {
	lowest := qs[0].Queue
	for _, m := range qs {
		lowest = min(lowest, m.Queue)
	}
	if lowest != 1 {
		return
	}
	for _, m := range qs {
		m.Queue--
	}
}

// pairSplit pairs split rx/tx rings whose numbering continues from one
// direction into the other: bnxt_en and bnge name rx-0..n-1 then tx-n..,
// vmxnet3 names tx-0..n-1 then rx-n... The later direction is shifted down
// by the number of vectors of the earlier one.
func pairSplit(qs []*Match) {
	var rx, tx []*Match
	for _, m := range qs {
		switch m.Dir {
		case Rx:
			rx = append(rx, m)
		case Tx:
			tx = append(tx, m)
		}
	}
	if len(rx) == 0 || len(tx) == 0 {
		return
	}
	switch {
	case allAtLeast(tx, len(rx)):
		shift(tx, len(rx))
	case allAtLeast(rx, len(tx)):
		shift(rx, len(tx))
	}
}

func allAtLeast(qs []*Match, n int) bool {
	for _, m := range qs {
		if m.Queue < n {
			return false
		}
	}
	return true
}

func shift(qs []*Match, n int) {
	for _, m := range qs {
		m.Queue -= n
	}
}
