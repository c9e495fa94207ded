package errjoin

import (
	"errors"
	"fmt"
	"testing"
)

func TestDistinct(t *testing.T) {
	if Distinct() != nil || Distinct(nil, nil) != nil {
		t.Fatal("no error joined to non-nil")
	}
	cause := errors.New("permission denied")
	var errs []error
	for i := range 40 {
		errs = append(errs, fmt.Errorf("open socket: %w", cause))
		if i == 3 {
			errs = append(errs, errors.New("other"), nil)
		}
	}
	err := Distinct(errs...)
	if got, want := err.Error(), "open socket: permission denied (40 times)\nother"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if !errors.Is(err, cause) {
		t.Error("errors.Is does not see the joined cause")
	}
	if got := Distinct(errors.New("one")).Error(); got != "one" {
		t.Errorf("one error: %q", got)
	}
}
