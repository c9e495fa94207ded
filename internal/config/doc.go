// Package config loads a command's configuration file onto its flags.
//
// A file is YAML, one mapping whose keys are the command's flag long
// names and whose values are what the flag takes on the command line: a
// scalar (durations and sizes as the flag's strings, "10s", "256MiB"), or
// for a repeatable flag a list (a scalar is one item). Every value goes
// through the flag's own Set, so the file is checked exactly as the
// command line is. A flag given on the command line (pflag's Changed)
// wins over the file: its key in the file must still be a flag and of
// the flag's shape (one value or a list), but its value is not Set, so
// the flag does not check it. An unknown key, a list for a single-valued flag, a
// key with no value, a key given twice or a value the flag refuses is an
// *Error naming the file and the line.
//
// Print writes the effective configuration in the same format, each key
// with where its value came from, and Encode writes settings (the lab's
// agents, the bootstrap bundles) in it.
package config
