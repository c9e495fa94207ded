package gossip

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

func TestShuttingDownDemotes(t *testing.T) {
	var buf bytes.Buffer
	l := hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Warn})
	w := newLogWriter(l)
	std := w.logger()
	std.Printf("[ERR] memberlist: Failed to send gossip: boom")
	std.Printf("[INFO] serf: quiet")
	if !strings.Contains(buf.String(), "[ERROR] memberlist: Failed to send gossip: boom") {
		t.Fatalf("an error before shutting down is an error:\n%s", buf.String())
	}
	if strings.Contains(buf.String(), "quiet") {
		t.Fatalf("info reached a warn-level logger:\n%s", buf.String())
	}
	buf.Reset()
	w.shuttingDown()
	std.Printf("[ERR] memberlist: Failed to send indirect UDP ping: use of closed network connection")
	std.Printf("[WARN] memberlist: Was able to connect to r2 over TCP but UDP probes failed")
	if buf.Len() != 0 {
		t.Fatalf("errors while shutting down reached the user:\n%s", buf.String())
	}
	l.SetLevel(hclog.Debug)
	std.Printf("[ERR] memberlist: late")
	if !strings.Contains(buf.String(), "[DEBUG] memberlist: late") {
		t.Fatalf("a shutdown error is kept at debug:\n%s", buf.String())
	}
}
