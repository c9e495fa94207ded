package topology

import (
	"bufio"
	"errors"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNeighbour(t *testing.T) {
	r, _ := fixture(t, "netfacts/host")
	for _, tt := range []struct {
		ip, mac string
		err     error
	}{
		{"198.18.0.2", "02:00:00:00:00:02", nil},
		{"198.18.0.3", "02:00:00:00:00:03", nil},  // permanent
		{"198.18.0.4", "", ErrNoNeighbour},        // incomplete
		{"198.18.0.5", "02:00:00:00:00:05", nil},  // the first complete entry
		{"198.18.0.9", "", ErrNoNeighbour},        // absent
		{"2001:2::1", "", ErrNoNeighbour},         // IPv6: not in procfs
		{"::ffff:198.18.0.2", "", ErrNoNeighbour}, // a mapped address is IPv6
	} {
		mac, err := Neighbour(r, netip.MustParseAddr(tt.ip))
		if got := mac.String(); got != tt.mac || !errors.Is(err, tt.err) {
			t.Errorf("Neighbour(%s) = %q, %v; want %q, %v", tt.ip, got, err, tt.mac, tt.err)
		}
	}
	empty, err := OpenRoot(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer empty.Close()
	if _, err := Neighbour(empty, netip.MustParseAddr("198.18.0.2")); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), ARPFile) {
		t.Errorf("no %s: %v", ARPFile, err)
	}
}

func TestParseARP(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "netfacts", "arp-odd"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	entries, err := ParseARP(f)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.IP.String()+" "+e.MAC.String()+" "+e.Device)
	}
	want := []string{
		"198.18.0.2 02:00:00:00:00:02 eth0",
		"198.18.0.6 02:00:00:00:00:06 ",
		"198.18.0.7 80:00:02:08:fe:80:00:00:00:00:00:00:00:02:c9:03:00:01:02:03 ib0",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("parsed\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if e := entries[0]; e.HWType != 1 || e.Flags != 2 || !e.Complete() {
		t.Errorf("first entry %+v", e)
	}
	if e := entries[2]; e.HWType != 32 {
		t.Errorf("InfiniBand entry: hw type %d, want 32", e.HWType)
	}
}

func FuzzParseARP(f *testing.F) {
	for _, name := range []string{"arp-odd", "host.tree"} {
		b, err := os.ReadFile(filepath.Join("testdata", "netfacts", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("IP address HW type Flags HW address Mask Device\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, err := ParseARP(strings.NewReader(string(b)))
		if err != nil && !errors.Is(err, bufio.ErrTooLong) {
			t.Fatalf("in-memory input: %v", err) // only a line too long to scan may fail
		}
		for _, e := range entries {
			if !e.IP.IsValid() || len(e.MAC) == 0 {
				t.Errorf("entry %+v: invalid address or MAC", e)
			}
			if _, err := netip.ParseAddr(e.IP.String()); err != nil {
				t.Errorf("entry %+v: address does not round-trip: %v", e, err)
			}
		}
	})
}
