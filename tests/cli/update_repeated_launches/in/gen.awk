# A profile of repeated launches, generated (3 MB: several reader batches):
# 5,000 shapes launched 30,000 times in a scrambled order, more shapes than
# the input's size suggests (the group tables grow while workers read them).
# 12% of the shapes are of six operators the database has CSVs for, the rest
# Cast (no CSV).  Some launches write their dtypes with an extra slot (same
# signature, other cells); some Add launches are AddV2 and some
# DispatchFFNCombine launches have an EP Size (same cells, other groups).
# Deterministic in any awk: Park-Miller generator, no rand().
function next_rand() { seed = (seed * 16807) % 2147483647; return seed } # exact in doubles
BEGIN {
    seed = 7
    split("Add MatMulV2 Index FusedInferAttentionScore DispatchFFNCombine Slice", ops, " ")
    print "OP Type,Task Duration(us),Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,EP Size,aicore_time(us)"
    for (r = 0; r < 30000; r++) {
        g = next_rand() % 5000
        op = g % 50 < 6 ? ops[g % 50 + 1] : "Cast"
        a = 1 + g % 97; b = 64 * (1 + int(g / 97))
        dt = "DT_BF16;DT_BF16"
        if (next_rand() % 5 == 0) dt = dt ";INT64"
        if (op == "MatMulV2") { in_s = a "," b ";" b "," 128; out_s = a ",128" }
        else if (op == "Index") { in_s = b "," a ";" a; out_s = a "," a }
        else if (op == "FusedInferAttentionScore") { in_s = a ",8,128;" b ",128;;" a ";;"; out_s = a ",8,128;" }
        else if (op == "Slice") { in_s = a "," b ";2;2"; out_s = a ",2" }
        else if (op == "DispatchFFNCombine") { in_s = a "," b ";8," b; out_s = a "," b }
        else { in_s = a "," b ";" a "," b; out_s = a "," b }
        ep = (op == "DispatchFFNCombine" && next_rand() % 2) ? 16 : "" # same cells, another signature
        if (op == "Add" && next_rand() % 2) op = "AddV2" # same cells, another operator
        dur = 1 + (next_rand() % 5000) / 100
        printf "%s,%.2f,\"%s\",%s,ND;ND,\"%s\",DT_BF16,%s,%.3f\n", op, dur, in_s, dt, out_s, ep, dur / 2
    }
}
