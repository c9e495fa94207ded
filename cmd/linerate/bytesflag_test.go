package main

import "testing"

// A --receiver-memory is bytes or a binary multiple, shown back as the
// largest unit that divides it.
func TestBytesValue(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		show string
	}{
		{"512MiB", 512 << 20, "512MiB"}, {"1 GiB", 1 << 30, "1GiB"}, {"4096", 4096, "4KiB"},
		{"100B", 100, "100B"}, {"2TiB", 2 << 40, "2TiB"}, {"1536KiB", 1536 << 10, "1536KiB"},
	} {
		var n uint64
		v := bytesValue{&n}
		if err := v.Set(tc.in); err != nil || n != tc.want || v.String() != tc.show {
			t.Errorf("%q: %d %q %v, want %d %q", tc.in, n, v.String(), err, tc.want, tc.show)
		}
	}
	for _, bad := range []string{"", "MiB", "-1MiB", "1.5GiB", "0", "20000000TiB", "5 PB"} {
		var n uint64
		if err := (bytesValue{&n}).Set(bad); err == nil {
			t.Errorf("%q accepted as %d", bad, n)
		}
	}
}
