// Package gossiplog carries serf's and memberlist's log lines into
// go-hclog at the level each line names ("[ERR]", "[WARN]", "[INFO]",
// "[DEBUG]"), and knows that a member which is shutting down has closed
// its own sockets: from Closing on, the transport errors memberlist's
// in-flight probes log ("use of closed network connection", "UDP probes
// failed") are what stopping looks like, so they are kept at debug
// level instead of reaching the user as errors after a run that went
// well.
package gossiplog

import (
	"log"
	"strings"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
)

// Writer is the io.Writer behind the *log.Logger handed to serf and
// memberlist; each Write is one line.
type Writer struct {
	log     hclog.Logger
	closing atomic.Bool
}

// New returns a Writer logging to l.
func New(l hclog.Logger) *Writer { return &Writer{log: l} }

// Logger is the standard logger serf.Config.Logger and
// memberlist.Config.Logger take.
func (w *Writer) Logger() *log.Logger { return log.New(w, "", 0) }

// Closing marks the member as shutting down: warnings and errors logged
// from now on are logged at debug level.
func (w *Writer) Closing() { w.closing.Store(true) }

// Write logs one line at the level its prefix names.
func (w *Writer) Write(p []byte) (int, error) {
	level, msg := Parse(string(p))
	if msg == "" {
		return len(p), nil
	}
	if level > hclog.Debug && w.closing.Load() {
		w.log.Debug(msg, "while", "shutting down", "level", level.String())
		return len(p), nil
	}
	w.log.Log(level, msg)
	return len(p), nil
}

// Parse splits a serf or memberlist line into its level and message; a
// line without a known prefix is informational.
func Parse(line string) (hclog.Level, string) {
	line = strings.TrimSpace(line)
	for _, p := range []struct {
		prefix string
		level  hclog.Level
	}{
		{"[ERR]", hclog.Error}, {"[ERROR]", hclog.Error},
		{"[WARN]", hclog.Warn}, {"[INFO]", hclog.Info},
		{"[DEBUG]", hclog.Debug}, {"[TRACE]", hclog.Trace},
	} {
		if rest, ok := strings.CutPrefix(line, p.prefix); ok {
			return p.level, strings.TrimSpace(rest)
		}
	}
	return hclog.Info, line
}
