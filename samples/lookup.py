"""lookup.py: how long do a model's operators take? Opens an opdb database folder with the
Python package (python/, `import opdb`) and asks for a matrix multiply, a view and an operator
the database does not map.

    python3 lookup.py DB
    python3 lookup.py examples/query/db

Exits 0 when the matrix multiply was answered, 1 otherwise.
"""
import sys

import opdb


def main(argv):
    if len(argv) != 2:
        print("usage: lookup.py DB", file=sys.stderr)
        return 2
    a = opdb.Tensor((52, 2048), "bfloat16")
    b = opdb.Tensor((2048, 2048), "bfloat16")
    with opdb.Database(argv[1]) as db:
        mm, view, gelu = db.lookup_many([
            ("aten.mm.default", [a, b]),
            ("aten.view.default", [opdb.Tensor((52, 2048), "bfloat16"), [106496]]),
            ("aten.gelu.default", [opdb.Tensor((52, 2048), "bfloat16")]),
        ])
        # the same GEMM asked at kernel level, with the shapes as the profiler records them
        k = db.lookup_kernel("MatMulV2", inputs=[((2, 256), "FLOAT16"), ((3584, 256), "FLOAT16")])
    for name, r in (("aten.mm", mm), ("aten.view", view), ("aten.gelu", gelu), ("MatMulV2", k)):
        if r.hit:
            print("%s: %.3f us (%s, %s, %s)" % (name, r.latency_us, r.source, r.kernel_type or "-", r.shape_match_rule))
        else:
            print("%s: no latency (%s)" % (name, r.miss_reason))
    return 0 if mm.hit else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
