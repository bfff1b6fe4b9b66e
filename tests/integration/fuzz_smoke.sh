#!/usr/bin/env bash
# make test's short fuzzing pass: every libFuzzer target (receive path with
# the whole engine behind it, argument and impairment parsers) for a few
# seconds each, the receive path seeded with frames from real captures
# (tests/fuzz/corpus/fuzz_rx).  Any crash, sanitizer report or broken
# invariant fails.  Longer runs: make fuzz FUZZ_SECONDS=600.
set -euo pipefail
cd "$(dirname "$0")/../.."
FUZZ_SECONDS=${FUZZ_SMOKE_SECONDS:-15} bash scripts/fuzz.sh
