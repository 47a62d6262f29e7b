#!/bin/sh
# diff.sh OPDB [FLAGS...]: runs `opdb grid FLAGS` and the oracle on two copies
# of a make_db.py database and compares trees, stdout and stderr.  FLAGS
# without --reference-quirks are compared with the oracle's --fixed mode.
# Developer tool (the oracle needs PyYAML); not part of ctest.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
opdb=$1; shift
w=$(mktemp -d); trap 'rm -rf "$w"' EXIT
python3 "$here/make_db.py" "$w/a" 2
cp -r "$w/a" "$w/b"
fixed=--fixed
for f in "$@"; do [ "$f" = --reference-quirks ] && fixed=; done
(cd "$w" && "$opdb" grid --data-dir a "$@" >a.out 2>a.err) || echo "opdb rc=$?"
(cd "$w" && python3 "$here/grid_oracle.py" $fixed --data-dir b "$@" >b.out 2>b.err) || echo "oracle rc=$?"
sed -i -e "s/ under a\./ under X./" -e "s#\"a/#\"X/#" "$w/a.out"; sed -i -e "s/ under b\./ under X./" -e "s#\"b/#\"X/#" "$w/b.out"
diff -r "$w/a" "$w/b" >/dev/null && diff "$w/a.out" "$w/b.out" && diff "$w/a.err" "$w/b.err" && echo "SAME: $*" && exit 0
diff -r "$w/a" "$w/b" | head -20; diff "$w/a.out" "$w/b.out" | head; diff "$w/a.err" "$w/b.err" | head
echo "DIFFERENT: $*"; exit 1
