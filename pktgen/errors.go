package pktgen

import (
	"errors"
	"fmt"
	"syscall"
)

// Sentinel errors callers branch on.
var (
	// ErrNoPktgen is returned when /proc/net/pktgen does not exist (module not
	// loaded, or a kernel without CONFIG_NET_PKTGEN).
	ErrNoPktgen = errors.New("no kernel pktgen")
	// ErrNotSupported is returned when the device or mode refused a setting
	// (burst or clone_skb on a device without skb sharing: veth, lo, bonds).
	ErrNotSupported = errors.New("not supported by the device")
	// ErrBusy is returned when the device is already on a pktgen thread.
	ErrBusy = errors.New("device busy in pktgen")
	// ErrNoDevice is returned when there is no such interface.
	ErrNoDevice = errors.New("no such interface")
	// ErrDeviceDown is returned when the interface is down.
	ErrDeviceDown = errors.New("interface is down")
	// ErrRefused is returned when pktgen refused a command (bad value, unknown
	// name, or a "successful" write whose Result is an error).
	ErrRefused = errors.New("pktgen refused the command")
	// ErrPermission is returned when writing pktgen fails for want of
	// CAP_NET_ADMIN in the initial user namespace.
	ErrPermission = errors.New("pktgen needs CAP_NET_ADMIN in the initial user namespace")
)

// errnoENOTSUPP is the kernel-internal ENOTSUPP that pktgen returned
// before 6.15 ("Unknown error 524"); it became EOPNOTSUPP.
const errnoENOTSUPP = syscall.Errno(524)

// classifyErrno maps a write error to the sentinel it means.
func classifyErrno(err error) error {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return nil
	}
	switch errno {
	case errnoENOTSUPP, syscall.EOPNOTSUPP:
		return ErrNotSupported
	case syscall.EBUSY:
		return ErrBusy
	case syscall.ENODEV:
		return ErrNoDevice
	case syscall.ENETDOWN:
		return ErrDeviceDown
	case syscall.EPERM:
		return ErrPermission
	case syscall.EINVAL, syscall.E2BIG:
		return ErrRefused
	}
	return nil
}

// CommandError is a failed pktgen write: which file, which command, the
// errno (if the write failed) and the file's Result text.
type CommandError struct {
	File   string
	Cmd    string
	Err    error  // the write error, or nil when the write "succeeded"
	Result string // the Result text read back
	kind   error
}

func (e *CommandError) Error() string {
	msg := fmt.Sprintf("pktgen %s: %q", e.File, e.Cmd)
	if e.Err != nil {
		msg += ": " + errnoText(e.Err)
	}
	if e.Result != "" {
		msg += fmt.Sprintf(" (Result: %s)", e.Result)
	}
	if e.kind != nil {
		msg += ": " + e.kind.Error()
	}
	return msg
}

// Is matches the sentinel the errno or Result means.
func (e *CommandError) Is(target error) bool { return e.kind != nil && target == e.kind }

// Unwrap returns the write error.
func (e *CommandError) Unwrap() error { return e.Err }

func errnoText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) && errno == errnoENOTSUPP {
		return "ENOTSUPP (errno 524, not supported)"
	}
	return err.Error()
}
