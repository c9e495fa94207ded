package agent

import (
	"strings"
	"testing"
)

// A release says whose lease ended and what was restored, or that none
// was held.
func TestForceReleasedText(t *testing.T) {
	for _, tt := range []struct {
		r    ForceReleased
		want string
	}{
		{ForceReleased{}, "no lease held: nothing to release\n"},
		{ForceReleased{Released: true, Holder: "coord", CoordinatorID: "c1", Generation: 3, Restored: 4, Warnings: []string{"irq 41 vanished"}},
			"released the lease of coord (coordinator_id \"c1\", generation 3): 4 IRQ affinities restored\nwarning: irq 41 vanished\n"},
		{ForceReleased{Released: true, CoordinatorID: "c1", Generation: 1},
			"released the lease of (no identity: --insecure) (coordinator_id \"c1\", generation 1): 0 IRQ affinities restored\n"},
	} {
		var b strings.Builder
		if err := tt.r.WriteText(&b); err != nil || b.String() != tt.want {
			t.Errorf("%+v: %q %v, want %q", tt.r, b.String(), err, tt.want)
		}
	}
}
