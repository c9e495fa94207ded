package pktgen

import "fmt"

// MaxIMIX is how many sizes pktgen's imix_weights takes.
const MaxIMIX = 20

// IMIXEntry is one size of an internet mix and its weight. Size is the
// Ethernet frame with its FCS, as RFC 2544 counts frames and as campaign
// specs, run specs and results give an imix (64 … 9018); pktgen's
// imix_weights, like PktSize, takes the frame without it (PktSize). The
// Agent service's ImixEntry carries the size without FCS: each side's
// proto edge converts.
type IMIXEntry struct {
	Size   int `json:"size" yaml:"size"`
	Weight int `json:"weight" yaml:"weight"`
}

// PktSize is the entry's frame without FCS, as pktgen's imix_weights and
// the Agent service's ImixEntry take it.
func (e IMIXEntry) PktSize() int { return e.Size - FCSBytes }

// Check refuses an entry whose size is no frame a run offers
// (MinFrameSize to MaxFrameSize, FCS included) or whose weight is below 1.
func (e IMIXEntry) Check() error {
	if e.Size < MinFrameSize || e.Size > MaxFrameSize || e.Weight < 1 {
		return fmt.Errorf("want a frame size of %d-%d bytes (with FCS) and a weight of at least 1", MinFrameSize, MaxFrameSize)
	}
	return nil
}

// IMIX is an internet mix: frame sizes and their weights.
type IMIX []IMIXEntry

// FrameBytes is the mix's mean frame without FCS, its sizes weighted: the
// one mean every rate and bit rate of a mix is computed with (0 for no
// mix or no weight).
func (m IMIX) FrameBytes() float64 {
	var sum, w float64
	for _, e := range m {
		sum += float64(e.PktSize() * e.Weight)
		w += float64(e.Weight)
	}
	if w == 0 {
		return 0
	}
	return sum / w
}
