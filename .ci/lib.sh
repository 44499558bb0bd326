# Shared by test.sh and bench.sh: where Azurite lives, and installing it when missing.
deadletter_cache="${DEADLETTER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/deadletter}"
azurite_dir="$deadletter_cache/azurite"
export DEADLETTER_AZURITE_BIN="$azurite_dir/node_modules/.bin/azurite-blob"

install_azurite() {
  if [ ! -x "$DEADLETTER_AZURITE_BIN" ]; then
    echo "installing Azurite 3.37.0 into $azurite_dir" >&2
    mkdir -p "$azurite_dir"
    npm install --prefix "$azurite_dir" --no-audit --no-fund --loglevel=error azurite@3.37.0 >/dev/null
  fi
}
