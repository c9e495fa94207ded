// Package gendoc writes what the package (`make package`) ships beside
// the binary that is generated from its commands, so that none of it can
// drift from them and none of it is kept in git: a man page for every
// command (cobra's doc generator over go-md2man) and the commented default
// agent configuration, one key per flag of `linerate agent`.
package gendoc
