package gossip

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

func TestParseLine(t *testing.T) {
	for _, c := range []struct {
		in    string
		level hclog.Level
		msg   string
	}{
		{"[ERR] memberlist: Failed to send indirect UDP ping: x\n", hclog.Error, "memberlist: Failed to send indirect UDP ping: x"},
		{"[WARN] memberlist: Was able to connect", hclog.Warn, "memberlist: Was able to connect"},
		{"[INFO] serf: EventMemberJoin: a 1.2.3.4", hclog.Info, "serf: EventMemberJoin: a 1.2.3.4"},
		{"[DEBUG] memberlist: Stream connection", hclog.Debug, "memberlist: Stream connection"},
		{"no prefix", hclog.Info, "no prefix"},
	} {
		level, msg := parseLine(c.in)
		if level != c.level || msg != c.msg {
			t.Errorf("parseLine(%q) = %s %q, want %s %q", c.in, level, msg, c.level, c.msg)
		}
	}
}

func TestClosingDemotes(t *testing.T) {
	var buf bytes.Buffer
	l := hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Warn})
	w := newLogWriter(l)
	std := w.logger()
	std.Printf("[ERR] memberlist: Failed to send gossip: boom")
	std.Printf("[INFO] serf: quiet")
	if !strings.Contains(buf.String(), "[ERROR] memberlist: Failed to send gossip: boom") {
		t.Fatalf("an error before Closing is an error:\n%s", buf.String())
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
	if !strings.Contains(buf.String(), "[DEBUG] memberlist: late") || !strings.Contains(buf.String(), "level=error") {
		t.Fatalf("a shutdown error is kept at debug with its level:\n%s", buf.String())
	}
}
