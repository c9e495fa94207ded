// serf's and memberlist's log lines go into go-hclog at the level each
// line names ("[ERR]", "[WARN]", "[INFO]", "[DEBUG]"). Once Stop has left
// the cluster the member is closing its own sockets, and what it logs
// from then on (memberlist's in-flight probes failing on "use of closed
// network connection", "UDP probes failed") is what stopping looks like:
// all of it is kept at debug level instead of reaching the user as
// errors after a run that went well.

package gossip

import (
	"io"
	"log"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
)

// logWriter is the io.Writer behind the *log.Logger handed to serf and
// memberlist; each Write is one line.
type logWriter struct {
	normal, quiet io.Writer
	closing       atomic.Bool
}

// newLogWriter returns a logWriter logging to l: at the level each line
// names, and at debug level once the member is shutting down.
func newLogWriter(l hclog.Logger) *logWriter {
	return &logWriter{
		normal: l.StandardWriter(&hclog.StandardLoggerOptions{InferLevels: true}),
		quiet:  l.StandardWriter(&hclog.StandardLoggerOptions{ForceLevel: hclog.Debug}),
	}
}

// logger is the standard logger serf.Config.Logger and
// memberlist.Config.Logger take.
func (w *logWriter) logger() *log.Logger { return log.New(w, "", 0) }

// shuttingDown marks the member as shutting down: what it logs from now
// on is logged at debug level.
func (w *logWriter) shuttingDown() { w.closing.Store(true) }

func (w *logWriter) Write(p []byte) (int, error) {
	if w.closing.Load() {
		return w.quiet.Write(p)
	}
	return w.normal.Write(p)
}
