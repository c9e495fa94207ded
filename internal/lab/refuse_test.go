//go:build linux

package lab

import "testing"

func TestLabBadSpec(t *testing.T) {
	for _, s := range []Spec{{Name: "", Senders: 1, Receivers: 1}, {Name: "a-b", Senders: 1, Receivers: 1}, {Name: "x", Senders: 0, Receivers: 1},
		{Name: "..", Senders: 1, Receivers: 1}, {Name: "a/../b", Senders: 1, Receivers: 1}, {Name: "abcdefghijkl", Senders: 1, Receivers: 1, Mgmt: true}} {
		if _, err := Up(s, nil); err == nil {
			t.Errorf("spec %+v accepted", s)
		}
	}
}

// RemoveLab builds no path from a name Up would refuse: the directory
// it removes is always one under /run/linerate.
func TestRemoveLabRefusesBadNames(t *testing.T) {
	for _, name := range []string{"x/../../..", "..", "a b", "a-b"} {
		if _, err := RemoveLab(name, nil); err == nil {
			t.Errorf("RemoveLab(%q) accepted the name", name)
		}
	}
}
