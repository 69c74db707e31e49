# Shared by the CLI tests: tests/cli/NAME.sh FLEETSIM SOURCE_DIR
set -u
FLEETSIM=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$(cd "$2" && pwd)
# fleetsim report's script: the sources' (the program knows no source path)
export FLEETSIM_DATADIR="${FLEETSIM_DATADIR:-$SRC/analysis}"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fleetsim-cli-XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
fails=0
passes=0

ok() { passes=$((passes + 1)); }
bad() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# expect_exit CODE CMD...: runs CMD, stdout to out.txt, stderr to err.txt
expect_exit() {
    local want=$1
    shift
    "$@" >out.txt 2>err.txt
    local got=$?
    if [ "$got" -ne "$want" ]; then
        bad "'$*' exited $got, expected $want; stderr: $(head -c 600 err.txt)"
        return 1
    fi
    ok
}

# expect_err REGEX: stderr of the last command matches
expect_err() {
    if grep -Eq -- "$1" err.txt; then ok; else bad "stderr does not match /$1/: $(head -c 600 err.txt)"; fi
}

expect_out() {
    if grep -Eq -- "$1" out.txt; then ok; else bad "stdout does not match /$1/: $(head -c 600 out.txt)"; fi
}

expect_no_file() {
    if [ -e "$1" ] || ls "$1".tmp.* >/dev/null 2>&1; then bad "$1 (or a temporary) exists"; else ok; fi
}

finish() {
    echo "$passes passed, $fails failed"
    [ "$fails" -eq 0 ]
}
