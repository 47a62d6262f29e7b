#!/bin/sh
# The Python package (python/): its unit tests against the built libopdb, then
# installed as a user would (libopdb and the package into one prefix, a venv
# with Debian's python3, pip without build isolation and without any index)
# and run again from there, finding libopdb through its install prefix.
#   python_package.sh SOURCE_DIR BUILD_DIR
set -eu
src=$(cd "$1" && pwd) build=$(cd "$2" && pwd)
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3 || true)
[ -n "$py" ] || { echo "python3 not found: skipped"; exit 77; }
lib=$(ls "$build"/libopdb.so.* 2>/dev/null | head -n 1)
[ -n "$lib" ] || { echo "python_package.sh: no libopdb.so in $build" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/opdb-python.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

echo "== unit tests, package from the source tree, OPDB_LIBRARY=$lib"
OPDB_LIBRARY=$lib PYTHONPATH=$src/python "$py" -m unittest discover -s "$src/python/tests"

if ! "$py" -c 'import venv, ensurepip' 2>/dev/null && ! "$py" -m venv --help >/dev/null 2>&1; then
    echo "python3 has no venv module (apt-get install python3-venv): install test skipped"; exit 77
fi
echo "== installed: cmake --install and pip install --no-build-isolation into one venv"
"$py" -m venv --system-site-packages "$tmp/venv"
cmake --install "$build" --prefix "$tmp/venv" >/dev/null
cp -R "$src/python" "$tmp/pkg"   # pip builds in the tree it is given: keep the checkout clean
cp -R "$src/python/tests" "$tmp/tests"   # run apart from the sources: import the installed package
(cd "$tmp" && "$tmp/venv/bin/python" -m pip install -q --no-build-isolation --no-index "$tmp/pkg")
found=$(cd "$tmp" && env -u OPDB_LIBRARY -u PYTHONPATH "$tmp/venv/bin/python" -c 'import opdb; print(opdb.library_path())')
case $found in
    "$tmp/venv"/*) echo "libopdb found through the install prefix: $found" ;;
    *) echo "python_package.sh: the installed package loaded $found, not the prefix's libopdb" >&2; exit 1 ;;
esac
(cd "$tmp/tests" && env -u OPDB_LIBRARY -u PYTHONPATH "$tmp/venv/bin/python" -m unittest discover -s "$tmp/tests")
