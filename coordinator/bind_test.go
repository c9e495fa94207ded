package coordinator

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/linerate/linerate/internal/cluster/gossip"
)

// The coordinator's gossip address without a host is the management
// address: --advertise's, else the source toward the first seed with a
// route; an explicit host wins.
func TestBindHost(t *testing.T) {
	for _, tc := range []struct {
		cfg        ClusterConfig
		want, fail string
	}{
		{ClusterConfig{Bind: ":0", Join: []string{"127.0.0.1:7946"}}, "127.0.0.1:0", ""},
		{ClusterConfig{Bind: ":7000", Join: []string{"[::1]:7946"}}, "[::1]:7000", ""},
		{ClusterConfig{Bind: ":0", Advertise: "10.2.0.5:7946", Join: []string{"127.0.0.1:7946"}}, "10.2.0.5:0", ""},
		{ClusterConfig{Bind: "0.0.0.0:0", Join: []string{"127.0.0.1:7946"}}, "0.0.0.0:0", ""},
		{ClusterConfig{Bind: "7946", Join: []string{"127.0.0.1:7946"}}, "", `--bind "7946"`},
		{ClusterConfig{Bind: ":0", Join: []string{"no-such-host.invalid:7946"}}, "", "no --join seed has a route"},
	} {
		got, err := bindHost(tc.cfg)
		switch {
		case tc.fail != "" && (err == nil || !strings.Contains(err.Error(), tc.fail)):
			t.Errorf("%+v: %q, %v; want an error with %q", tc.cfg, got, err, tc.fail)
		case tc.fail == "" && (err != nil || got != tc.want):
			t.Errorf("%+v: %q, %v; want %s", tc.cfg, got, err, tc.want)
		}
	}
}

// A coordinator without a gossip key refuses to join unless told to
// gossip in plaintext.
func TestJoinClusterNeedsKey(t *testing.T) {
	_, err := JoinCluster(context.Background(), ClusterConfig{Bind: "127.0.0.1:0", Join: []string{"127.0.0.1:1"}})
	if !errors.Is(err, gossip.ErrNoKey) || !strings.Contains(err.Error(), "--insecure-gossip") {
		t.Errorf("got %v, want ErrNoKey naming --insecure-gossip", err)
	}
}
