#!/usr/bin/env python3
"""gen_check_db.py OUT_DIR [ROWS_PER_TABLE] [SEED] [NOISE]: a database with known noise for
`opdb check`: MatMulV2 rows on an (M, K, N) grid whose latency is a smooth function of
M*K*N times (1 + e), e ~ Normal(0, NOISE) (default 0.05), a generic-compute table (Gelu, axis
M) with the same noise, an elementwise-free mapping that limits MatMulV2 to 1-D interpolation
(so the query oracle needs no scipy), and an attention table the check does not cover."""
import os
import random
import sys

out = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 40
rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 7)
noise = float(sys.argv[4]) if len(sys.argv) > 4 else 0.05
os.makedirs(out, exist_ok=True)
H = "Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Average Duration(us)\n"


def lat(base):
    return round(base * (1 + rng.gauss(0, noise)), 4)


with open(os.path.join(out, "MatMulV2.csv"), "w") as f:
    f.write(H)
    Ms = sorted({rng.randint(1, 4096) for _ in range(n)})
    for k, nn in ((1024, 2048), (4096, 1024)):
        for m in Ms:
            f.write('"""%d,%d;%d,%d""",DT_BF16;DT_BF16,ND;ND,"""%d,%d""",DT_BF16,ND,%s\n'
                    % (m, k, nn, k, m, nn, lat(4.0 + m * k * nn / 5.0e7)))
with open(os.path.join(out, "Gelu.csv"), "w") as f:
    f.write(H)
    for t in sorted({rng.randint(1, 8192) for _ in range(n)}):
        f.write('"""%d,4096""",DT_BF16,ND,"""%d,4096""",DT_BF16,ND,%s\n' % (t, t, lat(1.5 + t * 4096 / 4.0e6)))
with open(os.path.join(out, "FusedInferAttentionScore.csv"), "w") as f:
    f.write(H)
    f.write('"""1,8,128;1,1,128""",DT_BF16;DT_BF16,ND;ND,"""1,8,128""",DT_BF16,ND,10.0\n')
with open(os.path.join(out, "op_mapping.yaml"), "w") as f:
    f.write("operator_mappings:\n"
            "  aten.mm.default: {kernel_type: MatMulV2, category: compute}\n"
            "  aten.gelu.default: {kernel_type: Gelu, category: compute}\n"
            "  vllm.unified_attention: {kernel_type: FusedInferAttentionScore, category: compute,"
            " query_mode: attention_special}\n"
            "interpolation_policy:\n"
            "  kernel_overrides:\n"
            "    MatMulV2: {max_interpolation_dim: 1}\n")
