package agent

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// grpcCodes are the status codes of the agent's error kinds.
var grpcCodes = map[error]codes.Code{
	ErrInvalid:      codes.InvalidArgument,
	ErrNoLease:      codes.FailedPrecondition,
	ErrLeaseHeld:    codes.AlreadyExists,
	ErrNotHolder:    codes.PermissionDenied,
	ErrShuttingDown: codes.Unavailable,
	ErrRole:         codes.FailedPrecondition,
	ErrBusy:         codes.FailedPrecondition,
	ErrNotReady:     codes.FailedPrecondition,
	ErrHost:         codes.FailedPrecondition,
	ErrRefused:      codes.PermissionDenied,
	ErrAborted:      codes.Aborted,
	ErrCanceled:     codes.Canceled,
	ErrBudget:       codes.ResourceExhausted,
	ErrFailed:       codes.Internal,
}

// grpcCode is the status code of err: its kind's code; a context's end as
// gRPC reports it (Canceled, DeadlineExceeded); Internal for anything else.
func grpcCode(err error) codes.Code {
	if c, ok := grpcCodes[kindOf(err)]; ok {
		return c
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return status.FromContextError(err).Code()
	}
	return codes.Internal
}

// toStatus is the one place the agent's errors become gRPC statuses: the
// code of err's kind, with err's message. An error that already is a
// status (a stream's send failing) passes unchanged.
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	return status.Error(grpcCode(err), err.Error())
}
