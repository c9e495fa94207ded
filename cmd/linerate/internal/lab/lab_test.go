//go:build linux && traffic

package lab

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/linerate/linerate/internal/netns/nstest"
)

func TestLabUpCarriesAndLoses(t *testing.T) {
	nstest.SkipUnlessRoot(t)
	name := fmt.Sprintf("t%d", os.Getpid())
	l, err := Up(Spec{Name: name, Senders: 2, Receivers: 1, Loss: Loss{Every: 5}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Down()
	left, _ := Leftovers()
	for _, want := range []string{"sw", "s1", "s2", "r1"} {
		if !slices.Contains(left, Prefix(name)+want) {
			t.Errorf("namespace %s missing: %v", Prefix(name)+want, left)
		}
	}
	r := l.Receivers[0]
	for _, s := range l.Senders {
		rawSend(t, s.Data, r.Data.MAC, 50, false, false)
	}
	var total PortStats
	for i := 0; i < 100; i++ {
		total = PortStats{}
		for _, s := range l.Senders {
			st, _ := s.Port.Stats()
			total.Test += st.Test
			total.Dropped += st.Dropped
		}
		if total.Test == 100 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if total.Test != 100 || total.Dropped != 20 {
		t.Fatalf("ports saw %+v: want 100 test packets, 20 dropped", total)
	}
	if err := l.Down(); err != nil {
		t.Fatal(err)
	}
	left, _ = Leftovers()
	for _, n := range left {
		if len(n) > len(Prefix(name)) && n[:len(Prefix(name))] == Prefix(name) {
			t.Errorf("namespace %s left after Down", n)
		}
	}
}
