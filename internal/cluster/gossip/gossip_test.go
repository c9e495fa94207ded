package gossip

import (
	"bytes"
	"errors"
	"io/fs"
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

// A member without the cluster's key (plaintext) or with another key
// cannot join it, so it cannot announce a forged receiver nor a forged
// leave or failure of a member: the keyed members drop its packets, and
// it never appears among them.
func TestOutsiderCannotJoin(t *testing.T) {
	key := bytes.Repeat([]byte{5}, 32)
	start := func(name string, key []byte) *Member {
		m, err := Start(Config{Name: name, Tags: map[string]string{"role": "receiver"}, Bind: "127.0.0.1:0", Key: key})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = m.Shutdown() })
		return m
	}
	a, b := start("a", key), start("b", key)
	if n, err := b.Join([]string{a.Addr()}, true); n != 1 || err != nil {
		t.Fatalf("the keyed member's join: %d, %v", n, err)
	}
	for _, o := range []struct {
		name string
		key  []byte
	}{{"plaintext", nil}, {"other-key", bytes.Repeat([]byte{6}, 32)}} {
		out := start(o.name, o.key)
		if n, err := out.Join([]string{a.Addr()}, true); n != 0 || err == nil {
			t.Errorf("%s joined: %d, %v", o.name, n, err)
		}
		time.Sleep(300 * time.Millisecond)
		for _, m := range a.Members() {
			if m.Name == o.name {
				t.Errorf("%s appears in the cluster: %+v", o.name, m)
			}
		}
		if len(out.Members()) != 1 {
			t.Errorf("%s learned the cluster's members: %v", o.name, out.Members())
		}
	}
	if got := len(a.Members()); got != 2 {
		t.Errorf("the cluster has %d members, want a and b", got)
	}
}

// FindKey takes the named file, else the certificate directory's
// KeyFile; InitKey writes one (0600, even over a looser file with
// force) and refuses to replace it without force.
func TestFindAndInitKey(t *testing.T) {
	dir := t.TempDir()
	if k, found, err := FindKey("", dir); k != nil || found != "" || err != nil {
		t.Fatalf("an empty directory: %x %q %v", k, found, err)
	}
	if err := os.WriteFile(KeyPath(dir), []byte("loose\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := InitKey(dir, false); !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), "--force") {
		t.Errorf("InitKey over a key: %v, want ErrExist naming --force", err)
	}
	p, err := InitKey(dir, true)
	if err != nil || p != KeyPath(dir) {
		t.Fatalf("InitKey --force: %q %v", p, err)
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the replaced key's mode: %v %v, want 0600", fi.Mode(), err)
	}
	k, found, err := FindKey("", dir)
	if len(k) != 32 || found != p || err != nil {
		t.Errorf("FindKey in the directory: %d bytes from %q, %v", len(k), found, err)
	}
	other := filepath.Join(t.TempDir(), "other.key")
	if err := WriteKey(other, bytes.Repeat([]byte{9}, 16)); err != nil {
		t.Fatal(err)
	}
	if k, found, err := FindKey(other, dir); len(k) != 16 || found != other || err != nil {
		t.Errorf("FindKey with a file named: %d bytes from %q, %v; the named file wins", len(k), found, err)
	}
	if _, _, err := FindKey(filepath.Join(dir, "missing"), dir); err == nil {
		t.Error("a named key file that does not exist was not an error")
	}
}
