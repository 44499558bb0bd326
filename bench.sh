#!/usr/bin/env bash
# The performance measurement of README "Performance": installs Azurite when missing and runs
# cmd/deadletter-bench, which starts its own fresh Azurite per phase and compares deadletter with the raw azblob
# SDK in the same run. Extra arguments go to the tool (./bench.sh -rounds 5, ./bench.sh -smoke).
set -euo pipefail
cd "$(dirname "$0")"
. .ci/lib.sh
install_azurite
exec go run ./cmd/deadletter-bench "$@"
