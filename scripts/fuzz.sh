#!/bin/sh
# Runs each fuzz target (package:Name) for FUZZTIME. A crasher fails the run: Go writes it under
# the package's testdata/fuzz/Name/, where it stays as a regression test once committed.
#
# Go's fuzzing coordinator sometimes ends a time-bounded run with nothing but "context deadline
# exceeded" when the deadline lands while a worker is busy with a new interesting input: no
# failing input, nothing written. That is not a finding, so such a run is repeated once; a
# second one fails the build like any other error.
set -u
: "${GO:=go}" "${FUZZTIME:=15s}"
for target in "$@"; do
	pkg=${target%%:*}
	name=${target##*:}
	log=$(mktemp)
	for attempt in 1 2; do
		echo "fuzz $name ($pkg) for $FUZZTIME"
		if $GO test -run '^$' -fuzz "^$name\$" -fuzztime "$FUZZTIME" -fuzzminimizetime 1s "$pkg" >"$log" 2>&1; then
			break
		fi
		if [ "$attempt" = 1 ] && grep -q '^    context deadline exceeded$' "$log" && ! grep -q 'Failing input written to' "$log"; then
			echo "  the fuzzing coordinator stopped with \"context deadline exceeded\" and no failing input; running it again"
			continue
		fi
		tail -30 "$log"
		rm -f "$log"
		exit 1
	done
	rm -f "$log"
done
