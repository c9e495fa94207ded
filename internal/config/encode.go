package config

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"
)

// Setting is one key of a file: a flag's long name and its value, one
// string or (List) a list of them, with an optional comment before it
// (Head) and after it (Line).
type Setting struct {
	Key        string
	Values     []string
	List, Bool bool
	Head, Line string
}

// Value is a single-valued setting.
func Value(key, value string) Setting { return Setting{Key: key, Values: []string{value}} }

// List is a repeatable flag's setting.
func List(key string, values ...string) Setting { return Setting{Key: key, Values: values, List: true} }

// Encode writes settings as a file Load reads, with head, a comment
// block, first.
func Encode(w io.Writer, head string, settings []Setting) error {
	m := &yaml.Node{Kind: yaml.MappingNode}
	for _, s := range settings {
		k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s.Key, HeadComment: s.Head}
		var v *yaml.Node
		if s.List {
			v = &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
			for _, x := range s.Values {
				v.Content = append(v.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: x})
			}
		} else {
			tag := "!!str"
			if s.Bool {
				tag = "!!bool"
			}
			val := ""
			if len(s.Values) > 0 {
				val = s.Values[0]
			}
			v = &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: val}
		}
		v.LineComment = s.Line
		m.Content = append(m.Content, k, v)
	}
	doc := &yaml.Node{Kind: yaml.DocumentNode, HeadComment: head, Content: []*yaml.Node{m}}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("write configuration: %w", err)
	}
	return enc.Close()
}

// Effective is the configuration keys of fs say now, each with where its
// value came from (Line): the command line (changed before the file was
// loaded), the file (fromFile, its path) or the default.
func Effective(fs *pflag.FlagSet, keys []string, cmdline map[string]bool, fromFile []string, path string) []Setting {
	file := map[string]bool{}
	for _, k := range fromFile {
		file[k] = true
	}
	var out []Setting
	for _, k := range keys {
		f := fs.Lookup(k)
		if f == nil {
			continue
		}
		var s Setting
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			s = List(k, sv.GetSlice()...)
		} else {
			s = Value(k, f.Value.String())
			s.Bool = f.Value.Type() == "bool"
		}
		switch {
		case cmdline[k]:
			s.Line = "command line"
		case file[k]:
			s.Line = path
		default:
			s.Line = "default"
		}
		out = append(out, s)
	}
	return out
}

// Changed are the flags of fs set so far (on the command line, before a
// file is loaded).
func Changed(fs *pflag.FlagSet) map[string]bool {
	m := map[string]bool{}
	fs.Visit(func(f *pflag.Flag) { m[f.Name] = true })
	return m
}
