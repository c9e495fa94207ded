package gossip

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/linerate/linerate/internal/safefile"
)

// KeyFile is the gossip key's file in a certificate directory: `linerate
// certs init` writes it beside the CA, and agents and coordinators given
// --tls-dir read it from there unless --gossip-key names another file.
const KeyFile = "gossip.key"

// KeyPath is where the gossip key lives in the certificate directory dir.
func KeyPath(dir string) string { return filepath.Join(dir, KeyFile) }

// ErrNoKey is the refusal of a member started without a gossip key and
// without an explicit plaintext mode.
var ErrNoKey = errors.New("no gossip key")

// InsecureWarning is what a process gossiping in plaintext
// (--insecure-gossip) logs at every start.
const InsecureWarning = "gossip in plaintext (--insecure-gossip): anyone who reaches the gossip port can join the cluster, " +
	"announce a forged receiver, and end runs with forged leave or failure messages; give the cluster a key with --gossip-key " +
	"(`linerate certs init` writes " + KeyFile + " into the certificate directory)"

// NoKeyError is the refusal of a member that has no key: it names the
// flags and how to get a key. dir is the certificate directory a key was
// looked for in ("" when none was given).
func NoKeyError(dir string) error {
	where := "no --gossip-key and no --tls-dir to find " + KeyFile + " in"
	if dir != "" {
		where = fmt.Sprintf("no --gossip-key, and no %s in --tls-dir %s", KeyFile, dir)
	}
	return fmt.Errorf("%w: %s: give --gossip-key FILE (`linerate certs init --dir DIR` writes DIR/%s; "+
		"`linerate certs gossip-key --dir DIR` adds one to an existing directory; copy it to every agent and coordinator), "+
		"or --insecure-gossip to gossip in plaintext", ErrNoKey, where, KeyFile)
}

// CheckKey accepts no key or an AES-128/192/256 key.
func CheckKey(key []byte) error {
	switch len(key) {
	case 0, 16, 24, 32:
		return nil
	}
	return fmt.Errorf("gossip key: %d bytes: want 16, 24 or 32 (AES-128/192/256)", len(key))
}

// NewKey is a fresh random AES-256 gossip key.
func NewKey() ([]byte, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("gossip key: %w", err)
	}
	return key, nil
}

// ReadKey reads a key file written by WriteKey (base64, surrounding
// white space ignored); "" is no key.
func ReadKey(path string) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("gossip key: %w", err)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, fmt.Errorf("gossip key %s: not base64: %w", path, err)
	}
	if err := CheckKey(key); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return key, nil
}

// WriteKey writes key to path as ReadKey reads it, mode 0600 whatever the
// umask or an earlier file's mode (readable by its owner only).
func WriteKey(path string, key []byte) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	if err := safefile.WriteFile(path, []byte(base64.StdEncoding.EncodeToString(key)+"\n"), 0o600); err != nil {
		return fmt.Errorf("gossip key: %w", err)
	}
	return nil
}

// InitKey writes a fresh key to dir's KeyFile and returns its path. An
// existing key file is an fs.ErrExist error unless force, which replaces
// it (every member must then be given the new key).
func InitKey(dir string, force bool) (string, error) {
	p := KeyPath(dir)
	if !force {
		if _, err := os.Lstat(p); err == nil {
			return "", fmt.Errorf("gossip key %s: %w (give --force to replace it: every agent and coordinator then needs the new key)", p, fs.ErrExist)
		}
	}
	key, err := NewKey()
	if err != nil {
		return "", err
	}
	if err := WriteKey(p, key); err != nil {
		return "", err
	}
	return p, nil
}

// FindKey is the key a member uses: the file path names, else dir's
// KeyFile when dir is given and holds one. found is "" when there is no
// key; a key file that exists but cannot be read is an error.
func FindKey(path, dir string) (key []byte, found string, err error) {
	if path == "" && dir != "" {
		if _, serr := os.Stat(KeyPath(dir)); serr == nil {
			path = KeyPath(dir)
		}
	}
	if path == "" {
		return nil, "", nil
	}
	key, err = ReadKey(path)
	if err != nil {
		return nil, "", err
	}
	return key, path, nil
}
