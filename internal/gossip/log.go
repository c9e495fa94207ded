// serf's and memberlist's log lines go into go-hclog at the level each
// line names ("[ERR]", "[WARN]", "[INFO]", "[DEBUG]"). A member that is
// shutting down has closed its own sockets: once Stop has left the
// cluster, the
// transport errors memberlist's in-flight probes log ("use of closed
// network connection", "UDP probes failed") are what stopping looks
// like, so they are kept at debug level instead of reaching the user as
// errors after a run that went well.

package gossip

import (
	"log"
	"strings"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
)

// logWriter is the io.Writer behind the *log.Logger handed to serf and
// memberlist; each Write is one line.
type logWriter struct {
	log     hclog.Logger
	closing atomic.Bool
}

// newLogWriter returns a logWriter logging to l.
func newLogWriter(l hclog.Logger) *logWriter { return &logWriter{log: l} }

// logger is the standard logger serf.Config.Logger and
// memberlist.Config.Logger take.
func (w *logWriter) logger() *log.Logger { return log.New(w, "", 0) }

// shuttingDown marks the member as shutting down: warnings and errors
// logged from now on are logged at debug level.
func (w *logWriter) shuttingDown() { w.closing.Store(true) }

// Write logs one line at the level its prefix names.
func (w *logWriter) Write(p []byte) (int, error) {
	level, msg := parseLine(string(p))
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

// parseLine splits a serf or memberlist line into its level and
// message; a line without a known prefix is informational.
func parseLine(line string) (hclog.Level, string) {
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
