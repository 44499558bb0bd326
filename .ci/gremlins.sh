#!/usr/bin/env bash
# gremlins (a Go mutation tester) over a few files of one package: every other file of the package is excluded,
# one worker, a generous timeout, so it runs beside other work. docs/development.md records what it found.
#
#   .ci/gremlins.sh replay/rules judge.go pane.go alerts.go check.go readiness.go   the rules and readiness (~25 min)
#   .ci/gremlins.sh internal/twin account.go                                    the twin's account (~2 min)
#   RUN='Context|Worst|Config' .ci/gremlins.sh cmd/deadletter contexts.go       the contexts (~15 min)
#
# RUN narrows the package's tests to those that exercise the files (go test -run, through GOFLAGS): the
# cmd/deadletter package's whole suite takes minutes a mutant. Installs gremlins v0.6.0 when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: .ci/gremlins.sh PACKAGE-DIR FILE.go..." >&2; exit 2; }
pkg=$1
shift
gremlins=$(command -v gremlins || echo "$(go env GOPATH)/bin/gremlins")
[ -x "$gremlins" ] || go install github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0
exclude=()
for f in "$pkg"/*.go; do
	b=${f##*/}
	case $b in *_test.go) continue ;; esac
	keep=
	for k in "$@"; do [ "$b" = "$k" ] && keep=1; done
	[ -n "$keep" ] || exclude+=(-E "(^|/)$b\$")
done
if [ -n "${RUN:-}" ]; then
	export GOFLAGS="${GOFLAGS:+$GOFLAGS }-run=$RUN"
fi
exec nice "$gremlins" unleash --workers 1 --test-cpu 1 --timeout-coefficient 30 "${exclude[@]}" "./$pkg"
