package main

import (
	"strings"
	"testing"
)

// Rates that are no rates, or leave a thread below 1 pps, are refused as
// the flags are read, naming the flag, the value and what is valid.
func TestRateFlagsBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--senders", "a", "--receivers", "b", "--count", "10", "--rate", "inf"}, `invalid argument "inf" for "--rate" flag: want packets per second`},
		{[]string{"run", "--senders", "a", "--receivers", "b", "--count", "10", "--rate", "-5"}, `invalid argument "-5" for "--rate" flag: want at least 1 pps per thread`},
		{[]string{"run", "--senders", "a", "--receivers", "b", "--count", "10", "--rate", "1", "--threads", "2"},
			"--rate 1 with --threads 2: rate 1 pps per flow over 2 threads: below 1 pps per thread: want a rate of at least 2 pps or at most 1 thread"},
		{[]string{"lab", "run", "--count", "10", "--rate", "nan"}, `invalid argument "nan" for "--rate" flag`},
		{[]string{"lab", "run", "--count", "10", "--rate", "0"}, `invalid argument "0" for "--rate" flag: want at least 1 pps`},
		{[]string{"lab", "run", "--count", "10", "--rate", "3", "--threads", "4"}, "--rate 3 with --threads 4: rate 3 pps per flow over 4 threads"},
		{[]string{"lab", "campaign", "--search", "none", "--rates", "inf"}, `--rates "inf": inf: not a finite rate`},
		{[]string{"lab", "campaign", "--search", "none", "--rates", "0.1"}, `--rates "0.1": 0.1pps: below 1 pps`},
		{[]string{"lab", "campaign", "--search", "none", "--rates", "5", "--threads", "8"}, `--rates "5": 5pps: below 1 pps per thread over 8 threads: want at least 8 pps`},
		{[]string{"lab", "campaign", "--max-rate", "inf"}, `--max-rate "inf": inf: not a finite rate`},
		{[]string{"lab", "campaign", "--min-rate", "nan"}, `--min-rate "nan": nan: not a number`},
		{[]string{"lab", "campaign", "--min-rate", "-5"}, `--min-rate "-5": -5pps: want a positive rate`},
	} {
		code, _, errOut := linerate(t, tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q (want 2 and %q)", tc.args, code, errOut, tc.want)
		}
	}
}
