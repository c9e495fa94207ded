package mtls

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrUnsafe is returned when a certificate directory would be served or
// dialed from in a state that leaks keys: the CA's private key beside the
// served certificates, or a private key other users can read or replace.
var ErrUnsafe = errors.New("unsafe certificate directory")

// CheckServingDir refuses a directory a process is about to serve or dial
// with: dir holding ca.key (unless allowCAKey, for the CA's own machine),
// or name's key readable by group or others, or owned by someone other
// than the running user or root. The certs commands, which need ca.key,
// do not call it.
func CheckServingDir(dir, name string, allowCAKey bool) error {
	if !allowCAKey {
		caKey := filepath.Join(dir, CAKeyFile)
		if _, err := os.Lstat(caKey); err == nil {
			return fmt.Errorf("%s: the CA's private key sits beside the served certificates, so whoever reads this host can mint certificates: move it off the host (keep it only where `linerate certs` issues), or pass --allow-ca-key on the CA's own machine: %w", caKey, ErrUnsafe)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("check %s: %w", caKey, err)
		}
	}
	keyFile := KeyPath(dir, name)
	st, err := os.Stat(keyFile)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // Load names the missing pair and how to issue it.
		}
		return fmt.Errorf("check %s: %w", keyFile, err)
	}
	if m := st.Mode().Perm(); m&0o077 != 0 {
		return fmt.Errorf("%s has mode %04o: group or others can read the private key: run `chmod 600 %s`: %w", keyFile, m, keyFile, ErrUnsafe)
	}
	if uid, ok := fileOwner(st); ok && uid != os.Geteuid() && uid != 0 {
		return fmt.Errorf("%s is owned by uid %d, not the running user (uid %d) or root, who could replace the key: run `chown %d %s`: %w", keyFile, uid, os.Geteuid(), os.Geteuid(), keyFile, ErrUnsafe)
	}
	return nil
}
