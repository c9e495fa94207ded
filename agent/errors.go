package agent

import (
	"errors"
	"fmt"
)

// The kinds of failure of the agent's operations. Every error an operation
// returns is of one kind (errors.Is matches it) and carries its own message;
// the gRPC edge maps the kind to a status code in one place (grpcCode).
var (
	// ErrInvalid is a request that is malformed or out of range.
	ErrInvalid = errors.New("invalid argument")
	// ErrNoLease is a lease id that is missing, not the agent's current
	// lease, or expired.
	ErrNoLease = errors.New("no such lease")
	// ErrLeaseHeld is a lease another coordinator holds.
	ErrLeaseHeld = errors.New("lease held by another coordinator")
	// ErrNotHolder is a call from an identity (client certificate) other
	// than the lease holder's, whatever lease id it carries.
	ErrNotHolder = errors.New("not the lease holder")
	// ErrShuttingDown is a call that reached an agent that is shutting down.
	ErrShuttingDown = errors.New("agent shutting down")
	// ErrRole is a call the agent's role does not serve (Configure on a
	// receiver, Arm on a sender).
	ErrRole = errors.New("not the agent's role")
	// ErrBusy is a call that needs the sender idle while a send runs.
	ErrBusy = errors.New("a send is running")
	// ErrNotReady is a step out of order: nothing configured, armed,
	// started or finished yet.
	ErrNotReady = errors.New("step out of order")
	// ErrHost is a request the host cannot carry out as it is (no such
	// interface or NIC topology, a backend it cannot run, irqbalance
	// running).
	ErrHost = errors.New("the host cannot")
	// ErrRefused is what the safety rails refuse: a destination, a source
	// MAC or VLAN the agent does not allow, a management interface.
	ErrRefused = errors.New("destination refused")
	// ErrAborted is a send stopped before its start instant.
	ErrAborted = errors.New("aborted")
	// ErrCanceled is a call whose caller went away before it was done.
	ErrCanceled = errors.New("canceled")
	// ErrBudget is a request for more memory than the agent's budget
	// allows (a receiver's sequence state over --receiver-memory).
	ErrBudget = errors.New("over budget")
	// ErrFailed is an operation that failed on the host (a send, a
	// restore, stopping the receiver).
	ErrFailed = errors.New("failed")
)

// errorKinds are every kind above, for the gRPC mapping and its test.
var errorKinds = []error{
	ErrInvalid, ErrNoLease, ErrLeaseHeld, ErrNotHolder, ErrShuttingDown, ErrRole, ErrBusy,
	ErrNotReady, ErrHost, ErrRefused, ErrAborted, ErrCanceled, ErrBudget, ErrFailed,
}

// opError is an operation's failure: the message the caller reads, its
// kind, and the error it was made from (whose causes errors.Is sees too).
type opError struct {
	kind error
	msg  string
	err  error
}

func (e *opError) Error() string { return e.msg }

func (e *opError) Unwrap() []error {
	if e.err == nil {
		return []error{e.kind}
	}
	return []error{e.kind, e.err}
}

// failf is an error of kind with the message fmt.Errorf(format, args...)
// makes (a %w in format keeps its cause).
func failf(kind error, format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	return &opError{kind: kind, msg: err.Error(), err: err}
}

// fail is an error of kind with err's message, err its cause.
func fail(kind error, err error) error {
	return &opError{kind: kind, msg: err.Error(), err: err}
}

// kindOf is err's kind: the kind of the outermost operation error, else
// the first kind err matches; nil when it has none.
func kindOf(err error) error {
	var oe *opError
	if errors.As(err, &oe) {
		return oe.kind
	}
	for _, k := range errorKinds {
		if errors.Is(err, k) {
			return k
		}
	}
	return nil
}
