#!/usr/bin/env bash
# The whole test suite: installs Azurite (npm), and as root tmux, the completion shells, Prometheus, Alertmanager
# and systemd-analyze (apt) if missing, starts Azurite on a free loopback port, runs go vet, the Windows and macOS
# builds, staticcheck and go test ./... against it, fuzzes the parsers briefly, runs the benchmark tool at smoke
# sizes, and stops Azurite.
# Extra arguments go to `go test` (e.g. ./test.sh -run Drain -v).
set -euo pipefail
cd "$(dirname "$0")"

. .ci/lib.sh
install_azurite
azurite="$DEADLETTER_AZURITE_BIN"
# The real terminal and the real shells the tests drive: tmux for the dashboard, bash (with bash-completion), zsh
# and fish for completion.
missing=""
command -v tmux >/dev/null 2>&1 || missing="$missing tmux"
[ -f /usr/share/bash-completion/bash_completion ] || missing="$missing bash-completion"
command -v zsh >/dev/null 2>&1 || missing="$missing zsh"
command -v fish >/dev/null 2>&1 || missing="$missing fish"
# systemd-analyze verifies the shipped unit (deploy/systemd).
command -v systemd-analyze >/dev/null 2>&1 || missing="$missing systemd"
if [ -n "$missing" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "test.sh: installing$missing (the dashboard's terminal and the completion shells)"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing) >/dev/null
fi
# The alerting chain: promtool and Prometheus (package prometheus), amtool and Alertmanager
# (prometheus-alertmanager), for the rules' checks and unit tests and the end-to-end alert test.
if { ! command -v promtool || ! command -v amtool; } >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "test.sh: installing prometheus and prometheus-alertmanager (the alerting rules, routes and their chain)"
  # Only the binaries are wanted: a policy-rc.d keeps the packages from starting their servers meanwhile.
  policy=/usr/sbin/policy-rc.d created=""
  if [ ! -e "$policy" ]; then printf '#!/bin/sh\nexit 101\n' >"$policy"; chmod +x "$policy"; created=1; fi
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus prometheus-alertmanager) >/dev/null
  if [ -n "$created" ]; then rm -f "$policy"; fi
fi
# The shipped alerting files, by their own ecosystem's checkers (CI has them; elsewhere they are skipped).
if command -v promtool >/dev/null 2>&1 && command -v amtool >/dev/null 2>&1; then
  promtool check rules deploy/prometheus/rules.yml >/dev/null
  amtool check-config deploy/alertmanager/alertmanager.yml >/dev/null
  echo "test.sh: promtool check rules and amtool check-config pass"
elif [ -n "${CI:-}" ]; then
  echo "test.sh: promtool or amtool is missing (Debian packages prometheus, prometheus-alertmanager)" >&2; exit 1
fi

port=$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
workdir=$(mktemp -d)
"$azurite" --blobHost 127.0.0.1 --blobPort "$port" --inMemoryPersistence --skipApiVersionCheck \
  --disableTelemetry --silent >"$workdir/azurite.log" 2>&1 &
azurite_pid=$!
stop() { kill "$azurite_pid" 2>/dev/null || true; wait "$azurite_pid" 2>/dev/null || true; rm -rf "$workdir"; }
trap stop EXIT

deadline=$((SECONDS + 60))
until (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
  if ! kill -0 "$azurite_pid" 2>/dev/null; then cat "$workdir/azurite.log"; echo "test.sh: Azurite exited" >&2; exit 1; fi
  if [ $SECONDS -ge $deadline ]; then echo "test.sh: Azurite did not listen on $port within 60s" >&2; exit 1; fi
  sleep 0.2
done
export DEADLETTER_AZURITE="DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;BlobEndpoint=http://127.0.0.1:$port/devstoreaccount1;"
echo "test.sh: Azurite on 127.0.0.1:$port"

go vet ./...
# Windows and macOS operators run it too: both must build, tests included (the directory backend's locking and
# no-follow opens are per OS, behind build tags; so are the tests' FIFOs and umask).
GOOS=windows GOARCH=amd64 go vet ./... && GOOS=darwin GOARCH=arm64 go vet ./...
echo "test.sh: windows/amd64 and darwin/arm64 build and vet, tests included"
if [ $# -eq 0 ]; then
  go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
  echo "test.sh: staticcheck is clean"
fi
go test -count=1 -timeout 12m "$@" ./...
# deploy/ is a module of its own, so the Kubernetes and registry libraries that check the manifests and build the
# image never reach the binary. The PrometheusRule is generated from rules.yml: regenerated here, any difference
# fails.
(cd deploy && go run ./cmd/prometheusrule prometheus/rules.yml | diff -u kubernetes/prometheusrule.yaml -) ||
  { echo "test.sh: deploy/kubernetes/prometheusrule.yaml is not what rules.yml generates: in deploy/, run go run ./cmd/prometheusrule prometheus/rules.yml > kubernetes/prometheusrule.yaml" >&2; exit 1; }
echo "test.sh: the PrometheusRule is what rules.yml generates"
if [ $# -eq 0 ]; then
  (cd deploy && go vet ./... && go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./... && go test -count=1 ./...)
  echo "test.sh: deploy/ (Kubernetes manifests, the OCI image, the PrometheusRule) vets and passes"
fi
if [ $# -eq 0 ]; then
  # A failing input is saved under replay/rules/testdata/fuzz and fails the run at once. The fuzz engine itself can
  # stumble under load (a worker that does not start or stop, with no input saved): that gets one retry.
  for target in FuzzParseID FuzzParsePayload; do
    for attempt in 1 2; do
      if go test ./replay/rules -run '^$' -fuzz "^$target\$" -fuzztime 5s >"$workdir/fuzz.log" 2>&1; then
        break
      fi
      cat "$workdir/fuzz.log"
      if [ -n "$(ls -A "replay/rules/testdata/fuzz/$target" 2>/dev/null)" ] || [ $attempt = 2 ]; then
        echo "test.sh: $target failed; a failing input, if any, is under replay/rules/testdata/fuzz/$target" >&2
        exit 1
      fi
      echo "test.sh: $target stopped without a failing input; retrying once" >&2
    done
  done
  echo "test.sh: fuzzing (5s per parser) found nothing"
  go run ./cmd/deadletter-bench -smoke >/dev/null 2>&1 || { go run ./cmd/deadletter-bench -smoke; exit 1; }
  echo "test.sh: the benchmark tool runs (smoke sizes, not timed)"
fi
