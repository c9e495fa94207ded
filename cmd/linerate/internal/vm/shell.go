package vm

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// pingEvery is how often Exec asks a shell that has not answered yet
// (the guest still booting) whether it is there.
const pingEvery = 500 * time.Millisecond

// Exec runs cmd with /bin/sh in the guest of the Machine whose Dir is
// dir, over its shell serial port (ShellSock), and returns the output
// (stdout and stderr together), the exit status, and an error when the
// shell could not be reached or did not answer before ctx ended. One
// Exec at a time per guest, across processes (a lock file in dir); a
// guest still booting is waited for.
func Exec(ctx context.Context, dir, cmd string) (string, int, error) {
	unlock, err := lockShell(ctx, dir)
	if err != nil {
		return "", 0, fmt.Errorf("exec in guest %s: %w", dir, err)
	}
	defer unlock()
	var d net.Dialer
	var conn net.Conn
	for {
		conn, err = d.DialContext(ctx, "unix", filepath.Join(dir, ShellSock))
		if err == nil {
			break
		}
		// qemu creates the socket as it starts.
		if !errors.Is(err, os.ErrNotExist) && !errors.Is(err, unix.ECONNREFUSED) {
			return "", 0, fmt.Errorf("exec in guest %s: %w", dir, err)
		}
		select {
		case <-ctx.Done():
			return "", 0, fmt.Errorf("exec in guest %s: %w (last: %v)", dir, ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
	defer conn.Close()
	stopAfter := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	defer stopAfter()
	out, code, err := (&shellClient{conn: conn}).exec(ctx, cmd)
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		return "", 0, fmt.Errorf("exec %q in guest %s: %w", cmd, dir, err)
	}
	return out, code, nil
}

// shellClient speaks the framing of shellLoop over one connection.
type shellClient struct {
	conn net.Conn
	buf  []byte
}

func newNonce() (string, error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

func (c *shellClient) exec(ctx context.Context, cmd string) (string, int, error) {
	nonce, err := newNonce()
	if err != nil {
		return "", 0, err
	}
	pong := []byte("@@" + nonce + ":pong@@")
	for {
		// The leading newline ends whatever an earlier client left half
		// sent; the shell ignores the empty line.
		if _, err := c.conn.Write([]byte("\nping " + nonce + "\n")); err != nil {
			return "", 0, fmt.Errorf("ping the shell: %w", err)
		}
		ok, err := c.readUntil(func(b []byte) bool { return bytes.Contains(b, pong) }, time.Now().Add(pingEvery))
		if err != nil {
			return "", 0, fmt.Errorf("wait for the shell: %w", err)
		}
		if ok {
			break
		}
	}
	if err := ctx.Err(); err != nil { // its deadline may have been reset by the last ping
		return "", 0, err
	}
	c.buf = nil
	req := "exec " + nonce + " " + base64.StdEncoding.EncodeToString([]byte(cmd)) + "\n"
	if _, err := c.conn.Write([]byte(req)); err != nil {
		return "", 0, fmt.Errorf("send the command: %w", err)
	}
	reply := regexp.MustCompile(`@@` + nonce + `:out@@([A-Za-z0-9+/=]*)@@` + nonce + `:rc=(\d+)@@`)
	var m [][]byte
	if _, err := c.readUntil(func(b []byte) bool { m = reply.FindSubmatch(b); return m != nil }, time.Time{}); err != nil {
		return "", 0, fmt.Errorf("read the reply: %w", err)
	}
	out, err := base64.StdEncoding.DecodeString(string(m[1]))
	if err != nil {
		return "", 0, fmt.Errorf("decode the output: %w", err)
	}
	code, err := strconv.Atoi(string(m[2]))
	if err != nil {
		return "", 0, fmt.Errorf("exit status %q: %w", m[2], err)
	}
	return string(out), code, nil
}

// readUntil reads into c.buf until done(c.buf) or until (false, nil
// then; zero: no limit but the connection's deadline).
func (c *shellClient) readUntil(done func([]byte) bool, until time.Time) (bool, error) {
	p := make([]byte, 4096)
	for !done(c.buf) {
		if !until.IsZero() {
			// A deadline of our own would hide the caller's (ctx) one:
			// read in slices of at most pingEvery.
			if time.Now().After(until) {
				return false, nil
			}
			_ = c.conn.SetReadDeadline(until)
		}
		n, err := c.conn.Read(p)
		c.buf = append(c.buf, p[:n]...)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() && !until.IsZero() && !time.Now().Before(until) {
				if done(c.buf) {
					return true, nil
				}
				return false, nil
			}
			return false, err
		}
	}
	if !until.IsZero() {
		_ = c.conn.SetReadDeadline(time.Time{})
	}
	return true, nil
}

// lockShell takes dir's shell lock (flock), waiting until ctx ends.
func lockShell(ctx context.Context, dir string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, shellLock), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock the shell: %w", err)
	}
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() { _ = unix.Flock(int(f.Fd()), unix.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock the shell: %w", err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("lock the shell (another Exec holds it): %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
