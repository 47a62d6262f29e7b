#!/bin/sh
# samples.sh c|python SOURCE_DIR BUILD_DIR [CC]: builds and runs a program of samples/ as a user of
# the installed opdb would, on examples/query/db.
#   c:      cmake --install into a temporary prefix, samples/lookup.c compiled with the flags of
#           that prefix's opdb.pc (pkg-config), once against libopdb.so and once statically
#           (pkg-config --static), both run;
#   python: the same install, the python/ package pip-installed into a venv over that prefix
#           (no index, no build isolation), samples/lookup.py run from outside the checkout.
set -eu
what=$1
src=$(cd "$2" && pwd) build=$(cd "$3" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/opdb-samples.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
db=$src/examples/query/db

# expect FILE LINE: LINE is a whole line of FILE
expect() {
    grep -qxF -- "$2" "$1" || { echo "samples.sh: expected the line: $2" >&2; echo "got:" >&2; cat "$1" >&2; exit 1; }
}

case $what in
c)
    command -v pkg-config >/dev/null || { echo "pkg-config not found: skipped"; exit 77; }
    cc=${4:-${CC:-cc}}
    cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
    pc=$(find "$tmp/prefix" -name opdb.pc | head -n 1)
    [ -n "$pc" ] || { echo "samples.sh: no opdb.pc installed under $tmp/prefix" >&2; exit 1; }
    export PKG_CONFIG_PATH="${pc%/opdb.pc}"
    libdir=$(pkg-config --variable=libdir opdb)
    # shared: the flags a user's Makefile would take, plus an rpath so the program finds the
    # prefix's libopdb without LD_LIBRARY_PATH
    # shellcheck disable=SC2046
    "$cc" -std=c17 -Wall -Wextra -Werror -o "$tmp/lookup" "$src/samples/lookup.c" \
        $(pkg-config --cflags --libs opdb) -Wl,-rpath,"$libdir"
    case $(ldd "$tmp/lookup" | grep libopdb) in
        *"$tmp/prefix"*) ;;
        *) echo "samples.sh: lookup does not load the installed libopdb:" >&2; ldd "$tmp/lookup" >&2; exit 1 ;;
    esac
    # static: the same program linked against libopdb.a and everything opdb.pc says it needs
    # shellcheck disable=SC2046
    "$cc" -std=c17 -Wall -Wextra -Werror -o "$tmp/lookup_static" "$src/samples/lookup.c" \
        $(pkg-config --cflags opdb) $(pkg-config --static --libs opdb | sed "s|-lopdb\\b|$libdir/libopdb.a|")
    if ldd "$tmp/lookup_static" | grep -q libopdb; then
        echo "samples.sh: lookup_static loads a shared libopdb" >&2; exit 1
    fi
    for prog in lookup lookup_static; do
        "$tmp/$prog" "$db" MatMulV2 '2,256;3584,256' 'FLOAT16;FLOAT16' >"$tmp/out" 2>"$tmp/err" ||
            { cat "$tmp/out" "$tmp/err" >&2; exit 1; }
        expect "$tmp/out" 'MatMulV2 2,256;3584,256: 4.084 us (MEASURED, identity)'
        # a kernel the database has no table for: exit 1 and the reason
        rc=0
        "$tmp/$prog" "$db" Gelu '52,2048' 'DT_BF16' >"$tmp/out" 2>"$tmp/err" || rc=$?
        [ "$rc" -eq 1 ] || { echo "samples.sh: $prog on a missing kernel exited $rc, not 1" >&2; exit 1; }
        expect "$tmp/out" 'Gelu 52,2048: no latency (compute_csv_not_found)'
        # a folder that is not there: exit 1, one line naming it
        rc=0
        "$tmp/$prog" "$tmp/no-such-db" MatMulV2 '2,256' 'FLOAT16' >"$tmp/out" 2>"$tmp/err" || rc=$?
        [ "$rc" -eq 1 ] && grep -q "no-such-db" "$tmp/err" ||
            { echo "samples.sh: $prog on a missing folder: exit $rc" >&2; cat "$tmp/err" >&2; exit 1; }
    done
    echo "samples: C ok (shared and static)"
    ;;
python)
    py=/usr/bin/python3
    [ -x "$py" ] || py=$(command -v python3 || true)
    [ -n "$py" ] || { echo "python3 not found: skipped"; exit 77; }
    "$py" -m venv --help >/dev/null 2>&1 || { echo "python3 has no venv module: skipped"; exit 77; }
    "$py" -m venv --system-site-packages "$tmp/venv"
    cmake --install "$build" --prefix "$tmp/venv" >/dev/null
    cp -R "$src/python" "$tmp/pkg"   # pip builds in the tree it is given: keep the checkout clean
    (cd "$tmp" && "$tmp/venv/bin/python" -m pip install -q --no-build-isolation --no-index "$tmp/pkg")
    cp "$src/samples/lookup.py" "$tmp/lookup.py"
    (cd "$tmp" && env -u OPDB_LIBRARY -u PYTHONPATH "$tmp/venv/bin/python" lookup.py "$db") >"$tmp/out" 2>"$tmp/err" ||
        { cat "$tmp/out" "$tmp/err" >&2; exit 1; }
    expect "$tmp/out" 'aten.mm: 6.371 us (MEASURED, MatMulV2, identity)'
    expect "$tmp/out" 'aten.view: 0.000 us (MEASURED, -, zero_cost)'
    expect "$tmp/out" 'aten.gelu: no latency (wrapper_unmapped)'
    expect "$tmp/out" 'MatMulV2: 4.084 us (MEASURED, MatMulV2, identity)'
    echo "samples: Python ok"
    ;;
*)
    echo "usage: samples.sh c|python SOURCE_DIR BUILD_DIR" >&2
    exit 2
    ;;
esac
