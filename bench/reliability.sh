#!/usr/bin/env bash
# The reliability suite (run as root: `make reliability`): the
# TestReliability* tests of $pkg below — real agents in a lab's
# namespaces SIGKILLed, their coordinators SIGKILLed, a management link
# cut, every gRPC request type fuzzed, every long-running command sent
# SIGHUP/SIGINT/SIGTERM at each phase, bad input of every kind — at size
# N, their figures printed and written into docs/reliability.md (between
# its "figures" markers, with the date and the machine). A failing test
# fails the script; its figures are still printed and written, marked. So
# does a run that prints no figure, or a test that passed without one.
#
# Environment: N (20: kills of each kind and fuzz rounds; empty: the
# tests' own small default, as make test runs them), DOCS (1: write the
# figures into DOC; 0: print only), DOC (docs/reliability.md), RUN (a -run
# regexp, default every part), GO (go), LOG (the go test -v output, kept:
# /tmp/linerate-reliability.log). `make bench-smoke` runs one part at the
# small default into a copy of the doc: N= RUN='^TestReliabilityPartition$'
# DOC=<a temporary copy>.
set -euo pipefail
shopt -s inherit_errexit

# The package holding the TestReliability* tests: the one place it is named.
pkg=./cmd/linerate/internal/e2e

N=${N-20}
DOCS=${DOCS:-1}
RUN=${RUN:-^TestReliability}
GO=${GO:-go}
root=$(cd "$(dirname "$0")/.." && pwd)
doc=${DOC:-$root/docs/reliability.md}

[ "$(id -u)" = 0 ] || { echo "reliability: needs root (namespaces, XDP)" >&2; exit 1; }
[ -z "$N" ] || [[ $N =~ ^[1-9][0-9]*$ ]] || { echo "reliability: N=$N: want a positive whole number, or empty for the tests' small default" >&2; exit 1; }
case $DOCS in 0|1) ;; *) echo "reliability: DOCS=$DOCS: want 1 (write $doc) or 0 (print only)" >&2; exit 1;; esac
if [ "$DOCS" = 1 ] && ! { grep -q '<!-- figures:begin' "$doc" && grep -q '<!-- figures:end -->' "$doc"; }; then
	echo "reliability: $doc lacks the <!-- figures:begin … --> and <!-- figures:end --> markers the figures go between" >&2
	exit 1
fi
log=${LOG:-/tmp/linerate-reliability.log}

start=$(date -u +%s)
echo "reliability: N=${N:-default}, tests ${RUN} of $pkg, on $(nproc) CPUs, $(uname -r); log $log"
status=0
(cd "$root" && LINERATE_RELIABILITY_N=$N $GO test -count=1 -timeout 90m -tags traffic -p 1 -run "$RUN" -v "$pkg") >"$log" 2>&1 || status=$?
took=$(( $(date -u +%s) - start ))
figures=$(sed -nE 's/.*FIGURE (TestReliability[A-Za-z]*): (.*)$/\1\t\2/p' "$log")
verdicts=$(grep -E '^--- (PASS|FAIL): TestReliability' "$log" | sed -E 's/^--- //' || true)
if [ -z "$figures" ] || [ -z "$verdicts" ]; then
	echo "reliability: no figures or no verdicts (is $pkg where the TestReliability* tests are, and does $RUN name one?); the end of the log:" >&2
	tail -40 "$log" >&2
	exit 1
fi
printf '%s\n' "$figures" | awk -F'\t' '$1 != last { print ""; print $1; last = $1 } { print "  " $2 }'
echo
printf '%s\n' "$verdicts"
# Every test that passed printed its figures: one that did not lost them.
for t in $(printf '%s\n' "$verdicts" | sed -nE 's/^PASS: (TestReliability[A-Za-z]*) .*/\1/p'); do
	printf '%s\n' "$figures" | grep -q "^$t"$'\t' || { echo "reliability: $t passed without a FIGURE line" >&2; status=1; }
done
[ "$status" = 0 ] || echo "reliability: failures: the FAIL tests above; their messages are in $log" >&2

if [ "$DOCS" = 1 ]; then
	block=$(mktemp)
	{
		echo "<!-- figures:begin (bench/reliability.sh writes this part) -->"
		echo "Run $(date -u '+%Y-%m-%d %H:%M UTC'), N=${N:-default}, $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), kernel $(uname -r), ${took} s; verdicts: $(printf '%s' "$verdicts" | tr '\n' ';' | sed 's/;$//; s/;/; /g')."
		echo
		printf '%s\n' "$figures" | awk -F'\t' '$1 != last { if (last != "") print "```"; print ""; print "**" $1 "**"; print ""; print "```"; last = $1 } { print $2 } END { print "```" }'
		echo "<!-- figures:end -->"
	} >"$block"
	awk -v block="$block" '
		/<!-- figures:begin/ { while ((getline l < block) > 0) print l; skip = 1; next }
		/<!-- figures:end -->/ { skip = 0; next }
		!skip' "$doc" >"$doc.new" && mv "$doc.new" "$doc"
	rm -f "$block"
	echo "reliability: figures written into $doc"
fi
exit "$status"
