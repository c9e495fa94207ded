package nft

import (
	"strings"
	"testing"
)

// A kernel without nf_tables: no table, so no rule; a NOTRACK fix is
// refused naming why; its restore finds the table absent and does nothing.
func TestAbsent(t *testing.T) {
	a := Absent{Why: "/sys/module/nf_tables: absent"}
	st, err := a.Inspect(nil)
	if err != nil || len(st.Tables)+len(st.Tracking)+len(st.PathRules) != 0 {
		t.Errorf("inspect: %+v %v, want an empty ruleset", st, err)
	}
	if err := a.AddNotrack(nil); err == nil || !strings.Contains(err.Error(), "/sys/module/nf_tables: absent") {
		t.Errorf("add notrack: %v, want refused naming why", err)
	}
	s := a.NotrackSetting()
	if cur, err := a.Restorer().Current(s); cur != "" || err != nil || a.Restorer().Restore(s) != nil {
		t.Errorf("restorer: %q %v", cur, err)
	}
}
