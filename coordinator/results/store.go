package results

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/linerate/linerate/internal/safefile"
)

// DefaultDir is where results are stored unless told otherwise.
const DefaultDir = "./linerate-results"

// Errors callers branch on.
var (
	// ErrNotFound is returned when no stored document has that id or id prefix.
	ErrNotFound = errors.New("no such result")
	// ErrAmbiguous is returned when an id prefix matches more than one document.
	ErrAmbiguous = errors.New("ambiguous result id")
	// ErrSchema is returned when the document is not a linerate result of a
	// major version this build reads.
	ErrSchema = errors.New("unsupported result schema")
	// ErrNoDir is returned when the results directory does not exist.
	ErrNoDir = errors.New("no results directory")
	// ErrInvalid is returned when the document cannot be stored as it is (no
	// schema, no id, an id that is not a file name).
	ErrInvalid = errors.New("invalid result document")
)

// schemaName is Schema without its version.
const schemaName = "linerate.result/"

// NewID makes a document id from the time it was created: UTC to the
// second, then six random hex digits, so that ids sort by time and two
// results made in the same second do not collide
// (20261201T031500Z-3f9a1c).
func NewID(t time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return t.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// CheckSchema reports whether schema is one this build reads: the same
// name and major version as Schema (linerate.result/v1, v1.2, …).
func CheckSchema(schema string) error {
	if schema == "" {
		return fmt.Errorf("%w: no \"schema\" field (want %s)", ErrSchema, Schema)
	}
	want, _ := schemaMajor(Schema)
	got, ok := schemaMajor(schema)
	if !ok {
		return fmt.Errorf("%w: %q is not a linerate result schema (want %s)", ErrSchema, schema, Schema)
	}
	if got != want {
		return fmt.Errorf("%w: %s is major version %d, this linerate reads version %d (%s): use the linerate that wrote it", ErrSchema, schema, got, want, Schema)
	}
	return nil
}

// schemaMajor parses "linerate.result/vN" or "linerate.result/vN.M".
func schemaMajor(schema string) (int, bool) {
	v, ok := strings.CutPrefix(schema, schemaName+"v")
	if !ok {
		return 0, false
	}
	major, _, _ := strings.Cut(v, ".")
	n, err := strconv.Atoi(major)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

// checkID refuses ids that are not a plain file name.
func checkID(id string) error {
	if id == "" {
		return fmt.Errorf("%w: no \"id\"", ErrInvalid)
	}
	if len(id) > 200 || id[0] == '.' || strings.ContainsFunc(id, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.')
	}) {
		return fmt.Errorf("%w: id %q: want letters, digits, '-', '_' and '.' (not first), at most 200", ErrInvalid, id)
	}
	return nil
}

// Decode reads one document, refusing other schemas before decoding the
// rest (a document of another major version may not fit these types).
func Decode(r io.Reader) (*Document, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	var head struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("not a result document: %w", err)
	}
	if err := CheckSchema(head.Schema); err != nil {
		return nil, err
	}
	var d Document
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("decode %s document: %w", head.Schema, err)
	}
	return &d, nil
}

// ReadFile reads the document in the file at path.
func ReadFile(path string) (*Document, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read result %s: %w", path, err)
	}
	defer f.Close()
	d, err := Decode(f)
	if err != nil {
		return nil, fmt.Errorf("read result %s: %w", path, err)
	}
	return d, nil
}

// Store is a results directory: one file <id>.json per document. It
// holds no state besides the path; several processes may share one
// directory (each save is an atomic rename).
type Store struct {
	dir string
	// Processes tells whether a running document's writer still runs
	// (nil: LocalProcesses, this host's).
	Processes Processes
}

// NewStore returns the store in dir (DefaultDir when empty). The
// directory is made by the first Save.
func NewStore(dir string) *Store {
	if dir == "" {
		dir = DefaultDir
	}
	return &Store{dir: dir}
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

// Path is the file that holds the document id.
func (s *Store) Path(id string) string { return filepath.Join(s.dir, id+".json") }

// Save writes d to <dir>/<id>.json atomically (safefile.WriteFile: a
// temporary file in the same directory, written, fsynced, renamed over
// the name, and the directory fsynced), so a reader sees the old
// document or the new one, never half of one. A document with the same
// id is replaced (a campaign saves after every trial); anything there
// but a regular file is refused and left alone. It returns the file's
// path.
func (s *Store) Save(d *Document) (string, error) {
	if d == nil {
		return "", fmt.Errorf("save result: %w: nil document", ErrInvalid)
	}
	if d.Schema == "" {
		return "", fmt.Errorf("save result %q: %w: no \"schema\" (want %s)", d.ID, ErrInvalid, Schema)
	}
	if err := CheckSchema(d.Schema); err != nil {
		return "", fmt.Errorf("save result %q: %w", d.ID, err)
	}
	if err := checkID(d.ID); err != nil {
		return "", fmt.Errorf("save result: %w", err)
	}
	var buf bytes.Buffer
	if err := Encode(&buf, d); err != nil {
		return "", fmt.Errorf("save result %s: encode: %w", d.ID, err)
	}
	data := buf.Bytes()
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return "", fmt.Errorf("save result %s: %w", d.ID, err)
	}
	path := s.Path(d.ID)
	if err := safefile.WriteFile(path, data, 0o644); err != nil {
		return "", fmt.Errorf("save result %s: %w", d.ID, err)
	}
	return path, nil
}

// Entry is one stored document as `results list` shows it.
type Entry struct {
	ID      string    `json:"id"`
	Kind    string    `json:"kind"`
	Name    string    `json:"name,omitempty"`
	Status  string    `json:"status"`
	Created time.Time `json:"created"`
	// Sizes are the frame sizes of the summary ("64", "512", "imix").
	Sizes []string `json:"sizes"`
	// Summary is one line: throughput per size.
	Summary string `json:"summary"`
	File    string `json:"file"`
	// Problem says why the file could not be read (another schema,
	// broken JSON); the other fields are then empty.
	Problem string `json:"problem,omitempty"`
}

// ids lists the ids of the files in the directory, sorted.
func (s *Store) ids() ([]string, error) {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s does not exist (nothing was stored there yet; --dir names another)", ErrNoDir, s.dir)
		}
		return nil, fmt.Errorf("list results in %s: %w", s.dir, err)
	}
	var ids []string
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") {
			continue
		}
		ids = append(ids, strings.TrimSuffix(name, ".json"))
	}
	sort.Strings(ids)
	return ids, nil
}

// List reads every document in the directory and returns them oldest
// first (by created, then id). A file that cannot be read is listed
// with its Problem rather than failing the list.
func (s *Store) List() ([]Entry, error) {
	ids, err := s.ids()
	if err != nil {
		return nil, err
	}
	entries := make([]Entry, 0, len(ids))
	for _, id := range ids {
		path := s.Path(id)
		d, err := ReadFile(path)
		if err != nil {
			entries = append(entries, Entry{ID: id, File: path, Sizes: []string{}, Problem: problem(err)})
			continue
		}
		entries = append(entries, EntryOf(s.present(d), path))
	}
	sort.SliceStable(entries, func(i, j int) bool {
		a, b := entries[i], entries[j]
		if !a.Created.Equal(b.Created) {
			return a.Created.Before(b.Created)
		}
		return a.ID < b.ID
	})
	return entries, nil
}

// problem is an error without the "read result PATH: " the entry shows anyway.
func problem(err error) string {
	msg := err.Error()
	if _, rest, ok := strings.Cut(msg, ".json: "); ok {
		return rest
	}
	return msg
}

// EntryOf is the list entry of a document stored at path.
func EntryOf(d *Document, path string) Entry {
	e := Entry{ID: d.ID, Kind: d.Kind, Name: d.Name, Status: d.Status, Created: d.Created, File: path, Sizes: []string{}}
	var parts []string
	for _, r := range d.Rows() {
		e.Sizes = append(e.Sizes, r.Key())
		p := fmt.Sprintf("%s %s", r.Key(), FormatPPS(r.ThroughputPPS))
		if r.LineRatePct > 0 {
			p += fmt.Sprintf(" (%.1f%%)", r.LineRatePct)
		}
		if r.GeneratorLimited {
			p += " ≥"
		}
		parts = append(parts, p)
	}
	e.Summary = strings.Join(parts, ", ")
	if e.Summary == "" && d.Error != "" {
		e.Summary = d.Error
	}
	return e
}

// Load returns the document with that id, or the one whose id starts
// with it. An id matching several documents is an error that lists them
// (ErrAmbiguous); one matching none names the directory (ErrNotFound).
func (s *Store) Load(id string) (*Document, error) {
	if id == "" {
		return nil, fmt.Errorf("%w: empty id (list them with: linerate results list --dir %s)", ErrNotFound, s.dir)
	}
	if checkID(id) == nil {
		if d, err := ReadFile(s.Path(id)); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return s.present(d), err
		}
	}
	ids, err := s.ids()
	if err != nil {
		return nil, err
	}
	var matches []string
	for _, have := range ids {
		if strings.HasPrefix(have, id) {
			matches = append(matches, have)
		}
	}
	switch len(matches) {
	case 0:
		return nil, fmt.Errorf("%w: %q in %s (%d stored; list them with: linerate results list --dir %s)", ErrNotFound, id, s.dir, len(ids), s.dir)
	case 1:
		d, err := ReadFile(s.Path(matches[0]))
		return s.present(d), err
	}
	const most = 10
	shown := matches
	more := ""
	if len(shown) > most {
		shown, more = shown[:most], fmt.Sprintf(", and %d more", len(matches)-most)
	}
	return nil, fmt.Errorf("%w: %q matches %d results in %s: %s%s (give more of the id)", ErrAmbiguous, id, len(matches), s.dir, strings.Join(shown, ", "), more)
}

// Alive tells whether writer w of a running document still runs, as the
// store's Processes see it; known is false when this host cannot tell (w
// ran on another host).
func (s *Store) Alive(w Writer) (alive, known bool) {
	procs := s.Processes
	if procs == nil {
		procs = LocalProcesses{}
	}
	return procs.Alive(w)
}

// present is d as a reader should see it: a running document whose
// writer is gone (on this host) is interrupted, and says so and how to
// continue it. The file is left as it is.
func (s *Store) present(d *Document) *Document {
	if d == nil || d.Status != StatusRunning || d.Writer == nil {
		return d
	}
	if alive, known := s.Alive(*d.Writer); alive || !known {
		return d
	}
	d.Status = StatusInterrupted
	d.Error = fmt.Sprintf("its process (%s, started %s) is gone; %d trials kept; continue it with: linerate campaign resume %s",
		d.Writer, d.Writer.Started.Format(time.RFC3339), len(d.Trials), d.ID)
	return d
}

// FormatPPS prints a packet rate with an SI prefix: 14.88 Mpps, 812.7 kpps.
func FormatPPS(v float64) string { return FormatSI(v, "pps") }

// FormatSI prints a rate with an SI prefix before unit: two decimals
// from mega up, one for kilo, none below (14.88 Mpps, 16.25 Gb/s).
func FormatSI(v float64, unit string) string {
	switch {
	case v >= 1e9:
		return strconv.FormatFloat(v/1e9, 'f', 2, 64) + " G" + unit
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', 2, 64) + " M" + unit
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', 1, 64) + " k" + unit
	}
	return strconv.FormatFloat(v, 'f', 0, 64) + " " + unit
}

// Encode writes d as indented JSON, as Save stores it.
func Encode(w io.Writer, d *Document) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}
