package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"
)

// Reserved are the flags a file never sets: the file's own flags and
// help.
var Reserved = []string{"config", "print-config", "help"}

// Error is a file's refusal: where, which key and why.
type Error struct {
	Path string
	Line int // 0: the file as a whole
	Key  string
	Err  error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Path)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Key != "" {
		fmt.Fprintf(&b, ": %s", e.Key)
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Keys are the flags of fs a file may set: only, when given, else every
// flag of fs but Reserved.
func Keys(fs *pflag.FlagSet, only []string) []string {
	var keys []string
	fs.VisitAll(func(f *pflag.Flag) {
		if only != nil && !slices.Contains(only, f.Name) || only == nil && slices.Contains(Reserved, f.Name) {
			return
		}
		keys = append(keys, f.Name)
	})
	return keys
}

// Load reads data, the file at path, onto fs: every key of keys (see
// Keys) the file holds and the command line did not change is set with
// the flag's Set. It returns the keys it set.
func Load(fs *pflag.FlagSet, keys []string, path string, data []byte) ([]string, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
		return nil, nil // an empty file sets nothing
	} else if err != nil {
		return nil, &Error{Path: path, Err: fmt.Errorf("not YAML: %w", err)}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &Error{Path: path, Line: extra.Line, Err: errors.New("a second YAML document: want one mapping of flag names to values")}
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil, nil // only comments
	}
	if root.Kind != yaml.MappingNode {
		return nil, &Error{Path: path, Line: root.Line, Err: errors.New("want a mapping of flag names to values, such as \"tls-dir: /etc/linerate/tls\"")}
	}
	changed := Changed(fs)
	seen := map[string]int{}
	var set []string
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		name := k.Value
		if k.Kind != yaml.ScalarNode {
			return nil, &Error{Path: path, Line: k.Line, Err: errors.New("a key must be a flag name")}
		}
		if first, ok := seen[name]; ok {
			return nil, &Error{Path: path, Line: k.Line, Key: name, Err: fmt.Errorf("given twice (first on line %d)", first)}
		}
		seen[name] = k.Line
		f := fs.Lookup(name)
		if f == nil || !slices.Contains(keys, name) {
			return nil, &Error{Path: path, Line: k.Line, Key: name, Err: fmt.Errorf("unknown key: valid keys are the flags %s", strings.Join(keys, ", "))}
		}
		values, err := valuesOf(f, v)
		if err != nil {
			return nil, &Error{Path: path, Line: v.Line, Key: name, Err: err}
		}
		if changed[name] {
			continue // the command line wins
		}
		if len(values) == 0 { // an empty list: the flag's list emptied
			if sv, ok := f.Value.(pflag.SliceValue); ok {
				if err := sv.Replace(nil); err != nil {
					return nil, &Error{Path: path, Line: v.Line, Key: name, Err: err}
				}
			}
		}
		for _, s := range values {
			if err := fs.Set(name, s); err != nil {
				return nil, &Error{Path: path, Line: v.Line, Key: name, Err: fmt.Errorf("%q: %w", s, unwrapSet(err))}
			}
		}
		set = append(set, name)
	}
	return set, nil
}

// valuesOf is what v gives flag f: one scalar, or a list's items for a
// repeatable flag.
func valuesOf(f *pflag.Flag, v *yaml.Node) ([]string, error) {
	_, isSlice := f.Value.(pflag.SliceValue)
	switch {
	case v.Kind == yaml.AliasNode:
		return nil, errors.New("aliases are not taken: write the value")
	case v.Kind == yaml.ScalarNode && v.Tag == "!!null":
		return nil, fmt.Errorf("no value: write one (%s) or remove the line for the default", f.Value.Type())
	case v.Kind == yaml.ScalarNode:
		return []string{v.Value}, nil
	case v.Kind == yaml.SequenceNode && isSlice:
		var out []string
		for _, item := range v.Content {
			if item.Kind != yaml.ScalarNode || item.Tag == "!!null" {
				return nil, fmt.Errorf("line %d: want a list of %s values, not nested lists, mappings or empty items", item.Line, f.Value.Type())
			}
			out = append(out, item.Value)
		}
		return out, nil
	case v.Kind == yaml.SequenceNode:
		return nil, fmt.Errorf("takes one %s value, not a list", f.Value.Type())
	default:
		return nil, fmt.Errorf("want a %s value, not a mapping", f.Value.Type())
	}
}

// unwrapSet drops pflag's "invalid argument" prefix where it is there:
// the error already names the key and the value.
func unwrapSet(err error) error {
	if u := errors.Unwrap(err); u != nil {
		return u
	}
	return err
}
