package xsk

import (
	"errors"
	"strings"
	"testing"
)

func TestOptionsDefaults(t *testing.T) {
	o, err := Options{Ifindex: 1, TX: true}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if o.FrameSize != DefaultFrameSize || o.RingSize != DefaultRingSize || o.Frames != 2*DefaultRingSize || o.Mode != ModeAuto {
		t.Errorf("defaults = %+v, want frame size %d, ring %d, frames %d, auto", o, DefaultFrameSize, DefaultRingSize, 2*DefaultRingSize)
	}
	o, err = Options{Ifindex: 1, RX: true, TX: true, RingSize: 512}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if o.Frames != 4*512 {
		t.Errorf("frames of a two-direction socket with 512-slot rings = %d, want %d", o.Frames, 4*512)
	}
}

func TestOptionsRefused(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Ifindex: 1}, "neither RX nor TX"},
		{Options{Ifindex: 0, TX: true}, "interface index 0"},
		{Options{Ifindex: 1, Queue: -1, TX: true}, "queue -1"},
		{Options{Ifindex: 1, TX: true, FrameSize: 3000}, "frame size 3000: want 2048 or 4096"},
		{Options{Ifindex: 1, TX: true, RingSize: 1000}, "ring size 1000: want a power of two"},
		{Options{Ifindex: 1, TX: true, Frames: MaxFrames + 1}, "frames 262145"},
		{Options{Ifindex: 1, TX: true, Mode: "fast"}, `mode "fast": valid modes are auto, copy and zerocopy`},
	} {
		_, err := tc.o.withDefaults()
		if err == nil || !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want ErrOptions saying %q", tc.o, err, tc.want)
		}
	}
}
