package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/linerate/linerate/internal/ethtool"
	"github.com/linerate/linerate/topology"
)

// jsonText is v as a journal keeps it (these structs always marshal).
func jsonText(_ *testing.T, v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// The three ethtool fixes journal the parameters as read (JSON) before
// they write, and a restore puts every field back byte for byte.
func TestEthtoolFixRestore(t *testing.T) {
	orig := fakeNIC{
		pause:    ethtool.Pause{Autoneg: true, RX: true, TX: true},
		coalesce: ethtool.Coalesce{UseAdaptiveRX: true, UseAdaptiveTX: true, RXUsecs: 8, RXMaxFrames: 128, RXUsecsIRQ: 3, TXUsecs: 16, TXMaxFrames: 32, PktRateLow: 10000, RXUsecsLow: 2, RXUsecsHigh: 90, RateSampleInterval: 1},
		rings:    ethtool.Rings{RX: 1024, RXMax: 8192, RXJumbo: 7, RXJumboMax: 100, TX: 1024, TXMax: 8192},
	}
	nic := orig
	h := testHost(t, &nic)
	state := t.TempDir()
	o := Options{Iface: "eth1", Role: RoleBoth}
	jo := topology.JournalOptions{StateDir: state, Owner: "doctor-test"}
	applied, err := Fix(context.Background(), h, o, FixOptions{Classes: []FixClass{FixRings, FixFlowControl, FixCoalescing}, Journal: jo})
	if err != nil {
		t.Fatal(err)
	}
	wantCoalesce := orig.coalesce
	wantCoalesce.UseAdaptiveRX, wantCoalesce.UseAdaptiveTX, wantCoalesce.RXUsecs, wantCoalesce.RXMaxFrames = false, false, 0, 1
	wantRings := orig.rings
	wantRings.RX, wantRings.TX = 8192, 8192
	want := []Applied{ // in FixClasses' order, whatever order they were asked in
		{Class: FixFlowControl, From: jsonText(t, orig.pause), To: jsonText(t, ethtool.Pause{}),
			Setting: topology.Setting{Kind: topology.KindEthtoolPause, Key: "eth1", Original: jsonText(t, orig.pause), Class: "flow-control"}},
		{Class: FixCoalescing, From: jsonText(t, orig.coalesce), To: jsonText(t, wantCoalesce),
			Setting: topology.Setting{Kind: topology.KindEthtoolCoalesce, Key: "eth1", Original: jsonText(t, orig.coalesce), Class: "coalescing"}},
		{Class: FixRings, From: jsonText(t, orig.rings), To: jsonText(t, wantRings),
			Setting: topology.Setting{Kind: topology.KindEthtoolRings, Key: "eth1", Original: jsonText(t, orig.rings), Class: "rings"}},
	}
	if diff := cmp.Diff(want, applied); diff != "" {
		t.Fatalf("applied (-want +got):\n%s", diff)
	}
	if nic.pause != (ethtool.Pause{}) || nic.coalesce != wantCoalesce || nic.rings != wantRings {
		t.Fatalf("after the fix: %+v", nic)
	}
	journaled, err := topology.JournaledSettings(state, "eth1")
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range journaled {
		if s.Original != want[i].Setting.Original || s.Applied != want[i].To {
			t.Errorf("journaled %+v, want original %s applied %s", s, want[i].Setting.Original, want[i].To)
		}
	}
	// A second fix finds nothing to do and writes nothing.
	writes := nic.writes
	if again, err := Fix(context.Background(), h, o, FixOptions{Classes: FixClasses[:3], Journal: jo}); err != nil || len(again) != 0 || nic.writes != writes {
		t.Errorf("second fix: %+v, %v, %d writes; want nothing", again, err, nic.writes-writes)
	}

	res, err := topology.Restore(context.Background(), h.Root, topology.RestoreOptions{StateDir: state, Iface: "eth1", RootName: h.RootName, Settings: Restorers(h)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || len(res[0].Settings) != 3 {
		t.Fatalf("restore: %+v", res)
	}
	for _, ch := range res[0].Settings {
		if ch.Status != topology.StatusRestored || ch.ReadBack != ch.To {
			t.Errorf("restore of %s: %+v, want restored and read back as the original", ch.Kind, ch)
		}
	}
	for _, c := range []struct{ got, want any }{{nic.pause, orig.pause}, {nic.coalesce, orig.coalesce}, {nic.rings, orig.rings}} {
		if g, w := jsonText(t, c.got), jsonText(t, c.want); g != w {
			t.Errorf("restored %s, want %s", g, w)
		}
	}
	if s, err := topology.JournaledSettings(state, "eth1"); err != nil || s != nil {
		t.Errorf("journal after the restore: %+v, %v; want none", s, err)
	}
}

// A driver that refuses a write: the fix fails naming what it wrote and
// the refusal, the journal holds the original, and the restore puts back
// what a half-done write changed (or finds nothing changed).
func TestEthtoolFixRefused(t *testing.T) {
	for _, partial := range []bool{false, true} {
		refusal := errors.New("operation not supported")
		nic := fakeNIC{coalesce: mlx5Coalesce, setCoalErr: refusal, partial: partial}
		h := testHost(t, &nic)
		state := t.TempDir()
		jo := topology.JournalOptions{StateDir: state, Owner: "doctor-test"}
		applied, err := Fix(context.Background(), h, Options{Iface: "eth1", Role: RoleReceiver}, FixOptions{Classes: []FixClass{FixCoalescing}, Journal: jo})
		if !errors.Is(err, refusal) || !strings.Contains(err.Error(), "write ethtool-coalesce eth1") || !strings.Contains(err.Error(), "journaled") || len(applied) != 0 {
			t.Fatalf("partial %v: fix %+v, %v; want the refusal, naming the setting", partial, applied, err)
		}
		js, err := topology.JournaledSettings(state, "eth1")
		if err != nil || len(js) != 1 || js[0].Original != jsonText(t, mlx5Coalesce) || js[0].Applied != "" {
			t.Fatalf("partial %v: journal %+v, %v", partial, js, err)
		}
		res, err := topology.Restore(context.Background(), h.Root, topology.RestoreOptions{StateDir: state, Iface: "eth1", RootName: h.RootName, Settings: Restorers(h)})
		if err != nil {
			t.Fatalf("partial %v: restore: %v", partial, err)
		}
		wantStatus := topology.StatusUnchanged
		if partial {
			wantStatus = topology.StatusRestored
		}
		if got := res[0].Settings[0].Status; got != wantStatus || nic.coalesce != mlx5Coalesce {
			t.Errorf("partial %v: restore %s, coalescing %+v; want %s and the original", partial, got, nic.coalesce, wantStatus)
		}
	}
}

// A driver without the parameter gets no fix and no journal; a host
// whose ethtool cannot be opened fails the fix with the reason.
func TestEthtoolFixNotSupported(t *testing.T) {
	nic := fakeNIC{pauseErr: errNotExposed, coalErr: errNotExposed, ringsErr: errNotExposed}
	h := testHost(t, &nic)
	state := t.TempDir()
	applied, err := Fix(context.Background(), h, Options{Iface: "eth1"}, FixOptions{Classes: FixClasses[:3], Journal: topology.JournalOptions{StateDir: state}})
	if err != nil || len(applied) != 0 {
		t.Errorf("fix on veth: %+v, %v; want nothing", applied, err)
	}
	if js, err := topology.JournaledSettings(state, "eth1"); err != nil || js != nil {
		t.Errorf("journal %+v, %v; want none", js, err)
	}
	h.OpenNIC = nil
	if _, err := Fix(context.Background(), h, Options{Iface: "eth1"}, FixOptions{Classes: []FixClass{FixRings}, Journal: topology.JournalOptions{StateDir: state}}); err == nil || !strings.Contains(err.Error(), "open ethtool of eth1") {
		t.Errorf("fix without ethtool: %v, want the reason", err)
	}
}

func TestEthtoolRestorer(t *testing.T) {
	nic := fakeNIC{rings: ethtool.Rings{RX: 100, RXMax: 200, TX: 100, TXMax: 200}}
	h := testHost(t, &nic)
	r := Restorers(h)[topology.KindEthtoolRings]
	s := topology.Setting{Kind: topology.KindEthtoolRings, Key: "eth1", Original: `{"rx":50,"rx_mini":0,"rx_jumbo":0,"tx":60,"rx_max":200,"rx_mini_max":0,"rx_jumbo_max":0,"tx_max":200}`}
	if cur, err := r.Current(s); err != nil || cur != jsonText(t, nic.rings) {
		t.Errorf("current %s, %v", cur, err)
	}
	if err := r.Restore(s); err != nil || nic.rings.RX != 50 || nic.rings.TX != 60 {
		t.Errorf("restore: %v, rings %+v", err, nic.rings)
	}
	if nic.closed != 2 {
		t.Errorf("closed %d times, want once per call", nic.closed)
	}
	// An interface that is gone is fs.ErrNotExist: the restore skips it as vanished.
	gone := topology.Setting{Kind: topology.KindEthtoolRings, Key: "eth9", Original: s.Original}
	if _, err := r.Current(gone); !errors.Is(err, fs.ErrNotExist) || !errors.Is(err, ethtool.ErrNoInterface) {
		t.Errorf("current of a missing interface: %v, want fs.ErrNotExist", err)
	}
	// A journaled field this version does not know is refused, not dropped.
	bad := s
	bad.Original = `{"rx":50,"tx":60,"rx_buf_len":4096}`
	if err := r.Restore(bad); err == nil || !strings.Contains(err.Error(), "rx_buf_len") {
		t.Errorf("restore of an unknown field: %v", err)
	}
	if len(Restorers(Host{})) != 0 {
		t.Errorf("a host without ethtool has ethtool restorers")
	}
}
