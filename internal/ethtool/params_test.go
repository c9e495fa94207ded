package ethtool

import (
	"encoding/json"
	"reflect"
	"testing"
)

// Every field of Coalesce goes to its own word of struct ethtool_coalesce
// and back: a value per field, all different, survives the round trip,
// and each word holds the field the kernel's header puts there.
func TestCoalesceWords(t *testing.T) {
	var w [coalesceWords]uint32
	for i := range w {
		w[i] = uint32(100 + i)
	}
	w[9], w[10] = 1, 0 // use_adaptive_rx_coalesce, use_adaptive_tx_coalesce
	c := coalesceFromWords(w)
	if got := c.words(); got != w {
		t.Fatalf("round trip %v, want %v", got, w)
	}
	if c.RXUsecs != 100 || c.RXMaxFrames != 101 || c.TXUsecs != 104 || c.TXMaxFrames != 105 || !c.UseAdaptiveRX || c.UseAdaptiveTX || c.RateSampleInterval != 121 {
		t.Errorf("decoded %+v: fields in the wrong words", c)
	}
	// Every field is set from a word: none is left at zero.
	v := reflect.ValueOf(c)
	if v.NumField() != coalesceWords {
		t.Fatalf("Coalesce has %d fields, struct ethtool_coalesce %d", v.NumField(), coalesceWords)
	}
	for i := range v.NumField() {
		if v.Field(i).IsZero() && v.Type().Field(i).Name != "UseAdaptiveTX" {
			t.Errorf("field %s was not decoded", v.Type().Field(i).Name)
		}
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var back Coalesce
	if err := json.Unmarshal(b, &back); err != nil || back != c {
		t.Errorf("JSON round trip %+v, %v; want %+v", back, err, c)
	}
}

func TestDecodeLink(t *testing.T) {
	for _, tc := range []struct {
		speed                 uint32
		duplex, port, autoneg uint8
		want                  Link
	}{
		{10000, 1, 0, 0, Link{SpeedMbps: 10000, Duplex: "full", Port: "tp"}},
		{100, 0, 4, 1, Link{SpeedMbps: 100, Duplex: "half", Autoneg: true, Port: "fibre"}},
		{0xffffffff, 0xff, 0xff, 1, Link{SpeedMbps: -1, Duplex: "unknown", Autoneg: true, Port: "other"}},
		{400000, 1, 5, 0, Link{SpeedMbps: 400000, Duplex: "full", Port: "da"}},
		{25000, 1, 0x42, 0, Link{SpeedMbps: 25000, Duplex: "full"}}, // a port the uapi does not name
	} {
		if got := decodeLink(tc.speed, tc.duplex, tc.port, tc.autoneg); got != tc.want {
			t.Errorf("decodeLink(%d, %d, %d, %d) = %+v, want %+v", tc.speed, tc.duplex, tc.port, tc.autoneg, got, tc.want)
		}
	}
}

// Features 0, 33 and 34 in two blocks of four words; an unnamed bit is
// skipped, a feature past the blocks is not invented.
func TestDecodeFeatures(t *testing.T) {
	names := make([]string, 70)
	names[0], names[33], names[34], names[69] = "rx-gro", "rx-lro", "tx-fixed", "beyond"
	blocks := []uint32{
		1, 0, 1, 0, // rx-gro: available, not requested, active
		1<<1 | 1<<2, 1 << 1, 1 << 1, 1 << 2, // rx-lro available+requested+active; tx-fixed never changes
	}
	got := decodeFeatures(names, blocks)
	want := []Feature{
		{Name: "rx-gro", Available: true, Active: true},
		{Name: "rx-lro", Available: true, Requested: true, Active: true},
		{Name: "tx-fixed", Available: true, Fixed: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("decoded %+v, want %+v", got, want)
	}
}

func TestStrings(t *testing.T) {
	for _, tc := range []struct {
		s    fmtStringer
		want string
	}{
		{Pause{Autoneg: true, TX: true}, "autoneg on rx off tx on"},
		{Rings{RX: 256, RXMax: 4096, TX: 512, TXMax: 4096}, "rx 256/4096 tx 512/4096"},
		{Rings{RX: 1, RXMax: 2, RXJumbo: 3, RXJumboMax: 4}, "rx 1/2 rx-jumbo 3/4 tx 0/0"},
		{Coalesce{UseAdaptiveRX: true, RXUsecs: 8, RXMaxFrames: 128, TXUsecs: 16, TXMaxFrames: 32}, "adaptive-rx on adaptive-tx off rx-usecs 8 rx-frames 128 tx-usecs 16 tx-frames 32"},
		{Link{SpeedMbps: -1, Duplex: "unknown", Autoneg: true}, "unknown speed unknown duplex autoneg on"},
		{Link{SpeedMbps: 25000, Duplex: "full", Port: "da"}, "25000Mb/s full duplex autoneg off port da"},
	} {
		if got := tc.s.String(); got != tc.want {
			t.Errorf("%#v: %q, want %q", tc.s, got, tc.want)
		}
	}
}

type fmtStringer interface{ String() string }
