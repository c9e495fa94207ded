package coordinator

import (
	"github.com/linerate/linerate/pktgen"
)

// The agents' accounts of a run are the data plane's own types, decoded
// from the Agent service's messages in convert.go: a receiver's is a
// receiver.Report, a sender's a pktgen.Summary with what its agent adds
// to it (senderReport). They are the matcher's input (match.go).

// senderReport is a sender's account of its part in a run: its backend's
// summary, and its host's interface tx drops during the send, which the
// agent reads beside it.
type senderReport struct {
	pktgen.Summary
	TxDropped uint64
}
