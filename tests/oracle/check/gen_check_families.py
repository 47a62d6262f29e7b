#!/usr/bin/env python3
"""gen_check_families.py OUT_DIR FAMILY [SEED]: a small database for `opdb check` on one table
family beyond matmul/generic (FAMILY: attention, moe, scale, comm, scatter, quantmm), latencies a smooth function
of the shape times 1 + e, e ~ Normal(0, 5%). Every table limits interpolation to 1-D (the oracle
needs no scipy). attention also holds a LightningIndexer table and comm a table without
message_bytes/num_devices: both listed as not checked, with the reason."""
import os
import random
import sys

out, fam = sys.argv[1], sys.argv[2]
rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 11)
os.makedirs(out, exist_ok=True)
H = "Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Average Duration(us)"


def lat(base):
    return round(base * (1 + rng.gauss(0, 0.05)), 4)


def write(name, header, rows):
    with open(os.path.join(out, name), "w") as f:
        f.write(header + "\n")
        for r in rows:
            f.write(r + "\n")


def mapping(ops, kernels):
    with open(os.path.join(out, "op_mapping.yaml"), "w") as f:
        f.write("operator_mappings:\n")
        for o in ops:
            f.write("  %s\n" % o)
        if kernels:
            f.write("interpolation_policy:\n  kernel_overrides:\n")
        for k in kernels:
            f.write("    %s: {max_interpolation_dim: 1}\n" % k)


seqs = sorted({rng.randint(64, 8192) for _ in range(10)})
if fam == "attention":
    rows = []
    for heads, batch in ((32, "4"), (32, "1"), (8, "4")):
        for s in seqs:
            rows.append('"""128,%d,128;%d,8,128;%d,8,128""",DT_BF16;DT_BF16;DT_BF16,ND;ND;ND,"""128,%d,128""",'
                        'DT_BF16,ND,%s,%d,3,8,TND,%s' % (heads, s, s, heads, lat(5 + s * heads * int(batch) / 4000.0),
                                                         s, batch))
    # a row without a batch: asked with the points that have none (there are none left)
    rows.append('"""128,32,128;512,8,128;512,8,128""",DT_BF16;DT_BF16;DT_BF16,ND;ND;ND,"""128,32,128""",'
                'DT_BF16,ND,%s,512,3,8,TND,' % lat(9.0))
    write("FusedInferAttentionScore.csv", H + ",Runtime avg_seq_len,Runtime sparse_mode,"
          "Runtime num_key_value_heads,Runtime input_layout,Runtime batch_size", rows)
    write("LightningIndexer.csv", H + ",Runtime avg_seq_len",
          ['"""128,64,128;4096,1,128""",DT_BF16;DT_BF16,ND;ND,"""128,2048""",INT32,ND,20.5,4096'])
    mapping(["vllm.unified_attention: {kernel_type: FusedInferAttentionScore, category: compute,"
             " query_mode: attention_special}",
             "vllm.lightning_indexer: {kernel_type: LightningIndexer, category: compute,"
             " query_mode: attention_lightning_indexer}"], ["FusedInferAttentionScore"])
elif fam == "moe":
    rows = []
    toks = sorted({rng.randint(1, 4096) for _ in range(12)})
    for ep in (8, 16):
        for t in toks:
            rows.append('"""%d,7168;16,7168,4096;16,2048,7168;%d,8;%d,8;16;16""",'
                        'DT_BF16;INT8;INT8;INT32;FLOAT;FLOAT;FLOAT,ND;ND;ND;ND;ND;ND;ND,"""%d,7168""",DT_BF16,ND,%s,%d'
                        % (t, t, t, t, lat(30 + t * 0.05 * 16 / ep), ep))
    write("DispatchFFNCombine.csv", H + ",EP Size", rows)
    mapping(["tensor_cast.moe_fused.default: {kernel_type: DispatchFFNCombine, category: compute,"
             " query_mode: moe_fused}"], ["DispatchFFNCombine"])
elif fam == "scale":
    rows = []
    Ms = sorted({rng.randint(1, 8192) for _ in range(12)})
    for K in (4096, 7168):
        for M in Ms:
            rows.append('"""%d,%d""",DT_BF16,ND,"""%d,%d;%d""",INT8;FLOAT,ND;ND,%s'
                        % (M, K, M, K, M, lat(2 + M * K / 3.0e6)))
    write("DynamicQuant.csv", H, rows)
    mapping(["npu.dynamic_quant: {kernel_type: DynamicQuant, category: compute,"
             " compute_subcategory: compute_scale}"], ["DynamicQuant"])
elif fam == "comm":
    rows = []
    sizes = [1 << k for k in range(10, 27, 2)]
    for nd, tier in ((8, "0"), (8, "1"), (16, "")):
        for b in sizes:
            rows.append("%d,%d,%s,%s" % (b, nd, tier, lat(8 + b / (20000.0 if tier != "1" else 8000.0) * nd / 8)))
    rows.append("%d,8,0,%s" % (sizes[3], lat(8 + sizes[3] / 20000.0)))  # a repeat: answers its twin
    write("hcom_allReduce_.csv", "message_bytes,num_devices,topology_tier,Average Duration(us)", rows)
    write("hcom_broadcast_.csv", H, ['"""1024""",DT_BF16,ND,"""1024""",DT_BF16,ND,12.0'])
    mapping(["aten.all_reduce.default: {kernel_type: hcom_allReduce_, category: communication}"], [])
elif fam == "scatter":
    # paged-cache writes: two caches, a 3-D update (leading dims merged into tokens), and a row in
    # FRACTAL_NZ alone in its regime (asked, never answered)
    rows = []
    toks = sorted({rng.randint(1, 4096) for _ in range(10)})
    for blocks, width in ((4096, 512), (8192, 64)):
        for t in toks:
            rows.append('"""%d,128,1,%d;%d,1;%d,1,%d""",DT_BF16;INT32;DT_BF16,ND;ND;ND,"""%d,128,1,%d""",DT_BF16,ND,%s'
                        % (blocks, width, t, t, width, blocks, width, lat(3 + t * width / 60000.0)))
    for t in toks[:5]:
        rows.append('"""4096,128,1,512;%d,1;%d,2,256""",DT_BF16;INT32;DT_BF16,ND;ND;ND,"""4096,128,1,512""",'
                    'DT_BF16,ND,%s' % (t, t, lat(3 + t / 100.0)))
    rows.append('"""4096,128,1,512;64,1;64,1,512""",DT_BF16;INT32;DT_BF16,ND;ND;FRACTAL_NZ,"""4096,128,1,512""",'
                'DT_BF16,ND,%s' % lat(4.0))
    write("ScatterNdUpdate.csv", H, rows)
    mapping(["npu.scatter_nd_update_: {kernel_type: ScatterNdUpdate, category: compute,"
             " query_mode: scatter_nd_update_mla}"], ["ScatterNdUpdate"])
elif fam == "quantmm":
    # a quantized matmul: bf16 and fp16 outputs of the same inputs differ in latency (the query's
    # quantized rule keys the outputs but lets them differ: its groups are tried bf16 first), and a
    # FRACTAL_NZ weight, whose own regime the quantized rule matches alone (the plain rule would
    # answer it from the all-ND groups first)
    rows = []
    Ms = sorted({rng.randint(1, 8192) for _ in range(10)})
    for od, f in (("DT_BF16", 1.0), ("FLOAT16", 1.6)):
        for M in Ms:
            rows.append('"""%d,7168;7168,2048;2048""",INT8;INT8;FLOAT,ND;ND;ND,"""%d,2048""",%s,ND,%s'
                        % (M, M, od, lat(f * (4 + M * 7168 * 2048 / 4.0e8))))
    for M in Ms[::2]:
        rows.append('"""%d,7168;448,128,16,16;2048""",INT8;INT8;FLOAT,ND;FRACTAL_NZ;ND,"""%d,2048""",DT_BF16,ND,%s'
                    % (M, M, lat(1.3 * (4 + M * 7168 * 2048 / 4.0e8))))
    write("QuantBatchMatmulV3.csv", H, rows)
    mapping(["vllm.quant_matmul: {kernel_type: QuantBatchMatmulV3, category: compute,"
             " compute_subcategory: quantized_matmul}"], ["QuantBatchMatmulV3"])
else:
    sys.exit("unknown family: " + fam)
