package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
)

// The operator's way out of a lease: a local endpoint the agent serves on a
// unix socket in its state directory, `admin/NAME.sock` (the directory
// 0700, the socket 0600: only the agent's own user, root on a real host,
// can connect). `linerate agent release` uses it to force-release whatever
// lease is held: the run is stopped and the host restored as an expiry
// does. It is not reachable over the network at all.

// AdminSocket is the admin socket of the agent named name in stateDir.
func AdminSocket(stateDir, name string) string {
	return filepath.Join(stateDir, "admin", name+".sock")
}

// ForceReleased is what a force-release did.
type ForceReleased struct {
	// Released is false when no lease was held (nothing done).
	Released      bool     `json:"released"`
	Holder        string   `json:"holder,omitempty"` // the holder's certificate name ("" under --insecure)
	CoordinatorID string   `json:"coordinator_id,omitempty"`
	Generation    uint64   `json:"generation,omitempty"`
	Restored      int      `json:"restored_irqs"` // IRQ affinities put back
	Warnings      []string `json:"warnings,omitempty"`
	Error         string   `json:"error,omitempty"` // the cleanup failed (the lease is ended anyway)
}

// WriteText says what the release did, for people (`linerate agent
// release`).
func (r *ForceReleased) WriteText(w io.Writer) error {
	if !r.Released {
		_, err := fmt.Fprintln(w, "no lease held: nothing to release")
		return err
	}
	holder := r.Holder
	if holder == "" {
		holder = "(no identity: --insecure)"
	}
	_, err := fmt.Fprintf(w, "released the lease of %s (coordinator_id %q, generation %d): %d IRQ affinities restored\n", holder, r.CoordinatorID, r.Generation, r.Restored)
	for _, warn := range r.Warnings {
		fmt.Fprintln(w, "warning:", warn)
	}
	return err
}

// maxSocketPath is the size of a unix socket address's path (Linux
// sun_path, its terminating NUL included).
const maxSocketPath = 108

// adminEndpoint serves the admin socket.
type adminEndpoint struct {
	path   string
	srv    *http.Server
	served chan struct{}
}

// startAdmin serves the admin socket of a; a socket left by an agent that
// died is replaced, one another live agent serves is an error.
func startAdmin(path string, svc *service, log hclog.Logger) (*adminEndpoint, error) {
	if len(path) >= maxSocketPath {
		return nil, fmt.Errorf("agent admin socket %s: %d bytes, over the %d a unix socket path may have: use a shorter --state-dir", path, len(path), maxSocketPath-1)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("agent admin socket: create %s: %w", dir, err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("agent admin socket: make %s private (0700): %w", dir, err)
	}
	if _, err := os.Lstat(path); err == nil {
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("agent admin socket %s: another live agent of that name serves it (give each agent of a state directory its own --name)", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("agent admin socket: remove the stale %s: %w", path, err)
		}
	}
	lis, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("agent admin socket: listen on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		lis.Close()
		return nil, fmt.Errorf("agent admin socket: make %s owner-only (0600): %w", path, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/release", func(w http.ResponseWriter, r *http.Request) {
		res := svc.forceRelease(r.Context(), path)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(res)
	})
	e := &adminEndpoint{path: path, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}, served: make(chan struct{})}
	go func() {
		defer close(e.served)
		if err := e.srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("admin socket stopped", "socket", path, "error", err)
		}
	}()
	log.Info("serving the admin socket (linerate agent release)", "socket", path)
	return e, nil
}

// stop ends the endpoint (gracefully within ctx) and removes its socket.
func (e *adminEndpoint) stop(ctx context.Context) {
	if err := e.srv.Shutdown(ctx); err != nil {
		_ = e.srv.Close()
	}
	<-e.served
}

// forceRelease ends whatever lease is held, as its expiry would: stop,
// disarm, restore. via names the socket, for the audit line.
func (s *service) forceRelease(ctx context.Context, via string) ForceReleased {
	c, done := s.leases.forceRelease()
	if c == nil {
		s.log.Info("audit", "method", "admin release", "caller", "local operator", "peer", via, "lease", "none held: nothing to release")
		return ForceReleased{}
	}
	defer done()
	holder := caller{name: c.holder}.display()
	s.log.Warn("audit", "method", "admin release", "caller", "local operator", "peer", via, "lease", "force-released", "holder", holder, "coordinator", c.coordinator, "generation", c.gen)
	ctx, cancel := context.WithTimeout(ctx, s.leases.cleanupBound())
	defer cancel()
	r, err := s.endRun(ctx, c.gen, true)
	res := ForceReleased{Released: true, Holder: c.holder, CoordinatorID: c.coordinator, Generation: c.gen, Restored: len(r.changes), Warnings: r.warnings}
	if err != nil {
		res.Error = err.Error()
		s.log.Error("cleaning up after a force-released lease", "generation", c.gen, "error", err)
	}
	return res
}

// ForceRelease asks the agent named name (""; the only agent of stateDir)
// serving stateDir on this host to end its lease now, whoever holds it:
// the run is stopped and the host restored as an expiry does.
func ForceRelease(ctx context.Context, stateDir, name string) (*ForceReleased, error) {
	path, err := adminSocketOf(stateDir, name)
	if err != nil {
		return nil, err
	}
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", path)
	}}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://agent/v1/release", nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("force-release through %s (is the agent running, and are you its user, root?): %w", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("force-release through %s: read the answer: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("force-release through %s: %s: %s", path, resp.Status, strings.TrimSpace(string(body)))
	}
	var res ForceReleased
	if err := json.Unmarshal(body, &res); err != nil {
		return nil, fmt.Errorf("force-release through %s: the answer is not JSON: %w", path, err)
	}
	return &res, nil
}

// adminSocketOf is the admin socket of agent name in stateDir; without a
// name, the only one there.
func adminSocketOf(stateDir, name string) (string, error) {
	if name != "" {
		return AdminSocket(stateDir, name), nil
	}
	socks, err := filepath.Glob(filepath.Join(stateDir, "admin", "*.sock"))
	if err != nil {
		return "", fmt.Errorf("look for agent admin sockets in %s: %w", stateDir, err)
	}
	switch len(socks) {
	case 0:
		return "", fmt.Errorf("no agent admin socket in %s: is an agent running with --state-dir %s?", filepath.Join(stateDir, "admin"), stateDir)
	case 1:
		return socks[0], nil
	}
	names := make([]string, len(socks))
	for i, s := range socks {
		names[i] = strings.TrimSuffix(filepath.Base(s), ".sock")
	}
	return "", fmt.Errorf("several agents serve %s (%s): name one with --name", stateDir, strings.Join(names, ", "))
}
