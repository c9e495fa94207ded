package coordinator

import (
	"reflect"
	"testing"
)

func TestPathTruthSub(t *testing.T) {
	base := PathTruth{SwitchPorts: []PortTruth{
		{Name: "s1", To: "switch", TxPackets: 5, TestPackets: 100, TaggedPackets: 40, Drops: 2, ProgDrops: 2, InDrops: 2, Loss: "every 50"},
		{Name: "r1", To: "r1", TxPackets: 90, Drops: 3, QdiscDrops: 1, LinkDrops: 2, OutDrops: 3, ShapeBPS: 1e6},
	}}
	after := PathTruth{SwitchPorts: []PortTruth{
		{Name: "s1", To: "switch", TxPackets: 6, TestPackets: 1100, TaggedPackets: 1040, Drops: 22, ProgDrops: 22, InDrops: 22, Loss: "every 50"},
		{Name: "r1", To: "r1", TxPackets: 1080, Drops: 4, QdiscDrops: 2, LinkDrops: 2, OutDrops: 4, ShapeBPS: 1e6},
		{Name: "r2", To: "r2", TxPackets: 7}, // not in base: all of it is new
	}}
	got := after.Sub(base)
	want := PathTruth{SwitchPorts: []PortTruth{
		{Name: "s1", To: "switch", TxPackets: 1, TestPackets: 1000, TaggedPackets: 1000, Drops: 20, ProgDrops: 20, InDrops: 20, Loss: "every 50"},
		{Name: "r1", To: "r1", TxPackets: 990, Drops: 1, QdiscDrops: 1, OutDrops: 1, ShapeBPS: 1e6},
		{Name: "r2", To: "r2", TxPackets: 7},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Sub:\n%+v\nwant\n%+v", got, want)
	}
	if got.Drops() != 21 {
		t.Errorf("Drops %d, want 21", got.Drops())
	}
	if after.SwitchPorts[0].TestPackets != 1100 {
		t.Error("Sub changed its receiver")
	}
	// A counter that went backwards (a port recreated) counts from zero.
	if back := base.Sub(after); back.Drops() != 0 || back.SwitchPorts[0].TestPackets != 0 {
		t.Errorf("backwards: %+v", back)
	}
}

// Each direction's drops: its senders' ports' drops on the way in, its
// receivers' ports' on the way out; a port's drops of the other way
// belong to the other direction.
func TestPathTruthSplitDirections(t *testing.T) {
	truth := PathTruth{SwitchPorts: []PortTruth{
		{Name: "s1", InDrops: 5, OutDrops: 100},
		{Name: "s2", InDrops: 7},
		{Name: "r1", InDrops: 11, OutDrops: 1000},
		{Name: "r2", OutDrops: 3, InDrops: 30},
	}}
	truth.SplitDirections([]DirectionTotal{
		{Direction: Forward, Senders: []string{"s1", "s2"}, Receivers: []string{"r1", "r2"}},
		{Direction: Reverse, Senders: []string{"r1", "r2"}, Receivers: []string{"s1", "s2"}},
	})
	want := []DirectionDrops{{Direction: Forward, Drops: 5 + 7 + 1000 + 3}, {Direction: Reverse, Drops: 11 + 30 + 100}}
	if !reflect.DeepEqual(truth.Directions, want) {
		t.Errorf("directions %+v, want %+v", truth.Directions, want)
	}
	truth.SplitDirections(nil)
	if truth.Directions != nil {
		t.Errorf("a run one way: %+v, want none", truth.Directions)
	}
}
