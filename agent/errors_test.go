package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The gRPC code of every error kind, as the coordinator and the tests rely
// on it.
func TestGRPCCodeOfEveryKind(t *testing.T) {
	byCode := map[codes.Code][]error{
		codes.InvalidArgument:    {ErrInvalid},
		codes.FailedPrecondition: {ErrNoLease, ErrRole, ErrBusy, ErrNotReady, ErrHost},
		codes.AlreadyExists:      {ErrLeaseHeld},
		codes.Unavailable:        {ErrShuttingDown},
		codes.PermissionDenied:   {ErrRefused, ErrNotHolder},
		codes.Aborted:            {ErrAborted},
		codes.Canceled:           {ErrCanceled},
		codes.Internal:           {ErrFailed},
		codes.ResourceExhausted:  {ErrBudget},
	}
	want := map[error]codes.Code{}
	for c, kinds := range byCode {
		for _, k := range kinds {
			want[k] = c
		}
	}
	if len(want) != len(errorKinds) || len(grpcCodes) != len(errorKinds) {
		t.Fatalf("%d kinds, %d mapped, %d expected here: a kind is missing from one", len(errorKinds), len(grpcCodes), len(want))
	}
	for _, k := range errorKinds {
		code, ok := want[k]
		if !ok {
			t.Errorf("kind %q: no expected code in this test", k)
			continue
		}
		err := failf(k, "doing x to %s: %w", "y", fs.ErrNotExist)
		st := status.Convert(toStatus(err))
		if st.Code() != code || st.Message() != "doing x to y: file does not exist" {
			t.Errorf("kind %q: status %v %q, want %v with the error's own message", k, st.Code(), st.Message(), code)
		}
		if !errors.Is(err, k) || !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("kind %q: %v does not match its kind and its cause", k, err)
		}
		if c := grpcCode(fmt.Errorf("wrapped: %w", k)); c != code {
			t.Errorf("kind %q wrapped bare: %v, want %v", k, c, code)
		}
	}
}

func TestToStatus(t *testing.T) {
	if toStatus(nil) != nil {
		t.Error("nil is not nil")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		err  error
		code codes.Code
		msg  string
	}{
		{ctx.Err(), codes.Canceled, "context canceled"},
		{context.DeadlineExceeded, codes.DeadlineExceeded, "context deadline exceeded"},
		{errors.New("what?"), codes.Internal, "what?"},
		{status.Error(codes.Unavailable, "transport closing"), codes.Unavailable, "transport closing"},
		// The outermost kind decides: a refusal that wraps an invalid
		// argument is a refusal.
		{failf(ErrRefused, "configure: %w", failf(ErrInvalid, "bad")), codes.PermissionDenied, "configure: bad"},
		// A kind wrapping a context's end is that kind.
		{failf(ErrCanceled, "start: %w", context.DeadlineExceeded), codes.Canceled, "start: context deadline exceeded"},
	} {
		st := status.Convert(toStatus(tc.err))
		if st.Code() != tc.code || st.Message() != tc.msg {
			t.Errorf("%v: %v %q, want %v %q", tc.err, st.Code(), st.Message(), tc.code, tc.msg)
		}
	}
}
