package gossip

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/serf/serf"
)

func TestKeyFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "gossip.key")
	key := bytes.Repeat([]byte{7}, 32)
	if err := WriteKey(p, key); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode: %v %v", fi.Mode(), err)
	}
	got, err := ReadKey(p)
	if err != nil || !bytes.Equal(got, key) {
		t.Fatalf("ReadKey = %x, %v", got, err)
	}
	if k, err := ReadKey(""); k != nil || err != nil {
		t.Fatalf(`ReadKey("") = %x, %v; want no key`, k, err)
	}
	for _, c := range []struct{ body, want string }{
		{"not base64!\n", "not base64"},
		{"AAAA\n", "3 bytes: want 16, 24 or 32"},
	} {
		bad := filepath.Join(dir, "bad")
		if err := os.WriteFile(bad, []byte(c.body), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadKey(bad); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), bad) {
			t.Errorf("ReadKey(%q) = %v; want an error naming the file and %q", c.body, err, c.want)
		}
	}
	if err := WriteKey(p, []byte("short")); err == nil {
		t.Error("WriteKey wrote a 5-byte key")
	}
}

func TestStartRefusesBadInput(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Name: "a", Bind: "127.0.0.1"}, `gossip bind "127.0.0.1"`},
		{Config{Name: "a", Bind: "127.0.0.1:70000"}, "want 0-65535"},
		{Config{Name: "a", Bind: "127.0.0.1:0", Advertise: "x"}, `gossip advertise "x"`},
		{Config{Name: "a", Bind: "127.0.0.1:0", Key: []byte("short")}, "5 bytes"},
	} {
		if m, err := Start(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			if m != nil {
				_ = m.Stop()
			}
			t.Errorf("Start(%+v) = %v; want an error with %q", c.cfg, err, c.want)
		}
	}
}

// Two encrypted members on loopback find each other; the one that
// stops is seen leaving, not failing.
func TestJoinAndLeave(t *testing.T) {
	key := bytes.Repeat([]byte{3}, 16)
	fast := func(c *serf.Config) {
		c.MemberlistConfig.ProbeInterval = 50 * time.Millisecond
		c.MemberlistConfig.GossipInterval = 20 * time.Millisecond
	}
	start := func(name string) (*Member, chan serf.Event) {
		ev := make(chan serf.Event, 64)
		m, err := Start(Config{Name: name, Tags: map[string]string{"role": "test"}, Bind: "127.0.0.1:0", Key: key, Events: ev, Tune: fast})
		if err != nil {
			t.Fatal(err)
		}
		return m, ev
	}
	a, aev := start("a")
	defer a.Stop()
	b, _ := start("b")
	if n, err := b.Join([]string{a.Addr()}, true); n != 1 || err != nil {
		t.Fatalf("join %s: %d, %v", a.Addr(), n, err)
	}
	if err := b.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	deadline := time.After(10 * time.Second)
	for {
		select {
		case e := <-aev:
			if me, ok := e.(serf.MemberEvent); ok && me.Type == serf.EventMemberFailed {
				t.Fatalf("b was seen failing, not leaving: %v", me)
			}
			if me, ok := e.(serf.MemberEvent); ok && me.Type == serf.EventMemberLeave && me.Members[0].Name == "b" {
				return
			}
		case <-deadline:
			t.Fatal("a never saw b leave")
		}
	}
}
