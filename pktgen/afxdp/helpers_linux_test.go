//go:build linux && traffic

package afxdp

import (
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/linerate/linerate/pktgen"
	"github.com/linerate/linerate/pktgen/pktgentest"
)

// newBackend is the backend sending from the test bed's namespace A,
// logging into the test's output.
func newBackend(t testing.TB, s *pktgentest.Setup) *Backend {
	log := hclog.New(&hclog.LoggerOptions{Name: t.Name(), Level: hclog.Info, Output: t.Output()})
	return &Backend{Log: log, ThreadInit: s.EnterA()}
}

// hasNote fails t unless one of sum's notes contains every part.
func hasNote(t *testing.T, sum *pktgen.Summary, parts ...string) {
	t.Helper()
	for _, n := range sum.Notes {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(n, p)
		}
		if ok {
			return
		}
	}
	t.Errorf("no note says %q: %q", parts, sum.Notes)
}
