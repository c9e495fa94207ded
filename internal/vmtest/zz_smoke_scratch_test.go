package vmtest

import (
	"context"
	"testing"
)

func TestScratchBoot(t *testing.T) {
	k := SkipUnlessAvailable(t)
	t.Logf("%+v", k)
	g := &Guest{Kernel: k, Modules: []string{"veth", "pktgen"}, Script: "uname -a; ls /proc/net/pktgen; cat /proc/cmdline; exit 3", Log: TestLogger(t)}
	res, err := g.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("took %s exit %d\n%s\n---- output:\n%s", res.Duration, res.ExitCode, res.Console, res.Output)
}
