package search

import (
	"fmt"
	"slices"

	"github.com/linerate/linerate/internal/enum"
)

// Type names a throughput search, as a campaign spec's search.type and
// `linerate lab campaign --search` give it and a Result records it.
type Type string

// Search types. TypeNone is the campaign's own: no search, the rates it
// is given swept in order.
const (
	TypeRFC2544 Type = "rfc2544" // the default: RFC2544
	TypeNDRPDR  Type = "ndr-pdr" // NDRPDR
	TypeNone    Type = "none"
)

// Types lists every valid search type, the default first: the one list
// every validator, error and flag help says.
var Types = []Type{TypeRFC2544, TypeNDRPDR, TypeNone}

// Check is nil when t is one of Types; otherwise it names t and the valid
// types, for the caller to prefix with its field.
func (t Type) Check() error {
	if slices.Contains(Types, t) {
		return nil
	}
	return fmt.Errorf("%q: valid searches are %s", t, enum.And(enum.Explain(Types, Type.Meaning)))
}

// Meaning is what a type does where its name does not say it, for errors
// and help texts.
func (t Type) Meaning() string {
	if t == TypeNone {
		return "sweep the rates"
	}
	return ""
}
