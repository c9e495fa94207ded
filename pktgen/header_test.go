package pktgen

import (
	"bytes"
	"errors"
	"testing"
)

func TestHeaderRoundTrip(t *testing.T) {
	h := Header{Seq: 0x01020304, TvSec: 0xdeadbeef, TvUsec: 999999}
	b := make([]byte, HeaderLen)
	h.Encode(b)
	want := []byte{0xbe, 0x9b, 0xe9, 0x55, 1, 2, 3, 4, 0xde, 0xad, 0xbe, 0xef, 0, 0x0f, 0x42, 0x3f}
	if !bytes.Equal(b, want) {
		t.Fatalf("encoded % x, want % x", b, want)
	}
	got, err := DecodeHeader(append(b, 0, 0, 0))
	if err != nil || got != h {
		t.Fatalf("decode: %+v %v", got, err)
	}
}

func TestDecodeHeaderErrors(t *testing.T) {
	for _, b := range [][]byte{nil, make([]byte, 15), make([]byte, 16), {0xbe, 0x9b, 0xe9, 0x56, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}} {
		if _, err := DecodeHeader(b); !errors.Is(err, ErrNoHeader) {
			t.Errorf("DecodeHeader(% x) = %v, want ErrNoHeader", b, err)
		}
	}
}

func TestHeaderOffset(t *testing.T) {
	for _, tt := range []struct {
		v6         bool
		vlan, mpls int
		want       int
	}{{false, 0, 0, 42}, {true, 0, 0, 62}, {false, 1, 0, 46}, {false, 2, 0, 50}, {true, 1, 2, 74}} {
		if got := HeaderOffset(tt.v6, tt.vlan, tt.mpls); got != tt.want {
			t.Errorf("HeaderOffset(%v,%d,%d) = %d, want %d", tt.v6, tt.vlan, tt.mpls, got, tt.want)
		}
	}
}

// MinFrame is the headers and the 16-byte pktgen header: pktgen's own
// minimum of 58 bytes for IPv4 and 78 for IPv6, 4 more with a VLAN tag.
func TestMinFrame(t *testing.T) {
	for _, tt := range []struct {
		v6, vlan bool
		want     int
	}{{false, false, 58}, {true, false, 78}, {false, true, 62}, {true, true, 82}} {
		if got := MinFrame(tt.v6, tt.vlan); got != tt.want {
			t.Errorf("MinFrame(%v, %v) = %d, want %d", tt.v6, tt.vlan, got, tt.want)
		}
	}
}

func TestSeqAfter(t *testing.T) {
	if !SeqAfter(2, 1) || SeqAfter(1, 2) || SeqAfter(5, 5) || !SeqAfter(0, 0xffffffff) || SeqAfter(0xffffffff, 0) {
		t.Error("serial-number order wrong")
	}
}

func FuzzDecodeHeader(f *testing.F) {
	b := make([]byte, HeaderLen)
	Header{Seq: 7}.Encode(b)
	f.Add(b)
	f.Add([]byte{})
	f.Add([]byte{0xbe, 0x9b, 0xe9, 0x55})
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := DecodeHeader(data)
		if err != nil {
			if !errors.Is(err, ErrNoHeader) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		out := make([]byte, HeaderLen)
		h.Encode(out)
		if !bytes.Equal(out, data[:HeaderLen]) {
			t.Fatalf("re-encoded % x, input % x", out, data[:HeaderLen])
		}
	})
}
