/* `opdb comm validate`: the reference's alignment report (docs/COMM.md §5)
 * and, in the default mode, a least-squares fit per (n_dev, tier) beside it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/comm.h"
#include "core/call.h"
#include "opdb/fs.h"
#include "opdb/json_writer.h"
#include "opdb/pystr.h"
#include "opdb/schema.h"

typedef struct vrow {
    long long bytes, n;
    int tier;
    double meas, pred, ratio;
    const char *status;
} vrow;

typedef struct vfile {
    opdb_comm_op op;
    vrow *rows;
    size_t n, bad;
    int pass, warn, fail;
} vfile;

static const opdb_comm_op k_order[4] = {OPDB_COMM_ALL_REDUCE, OPDB_COMM_ALL_GATHER, OPDB_COMM_REDUCE_SCATTER,
                                         OPDB_COMM_ALL_TO_ALL};

/* One CSV record (Python csv's default dialect) from *p: cells into cells/lens. */
static size_t csv_record(const char **p, const char *end, opdb_strbuf *cells, size_t *offs, size_t max) {
    size_t n = 0;
    opdb_sb_clear(cells);
    const char *s = *p;
    for (;;) {
        if (n < max) offs[n] = cells->n;
        bool q = false;
        if (s < end && *s == '"') {
            q = true;
            s++;
        }
        while (s < end) {
            if (q) {
                if (*s == '"') {
                    if (s + 1 < end && s[1] == '"') {
                        opdb_sb_addc(cells, '"');
                        s += 2;
                        continue;
                    }
                    q = false;
                    s++;
                    continue;
                }
            } else if (*s == ',' || *s == '\n' || *s == '\r') {
                break;
            }
            opdb_sb_addc(cells, *s++);
        }
        opdb_sb_addc(cells, '\0');
        n++;
        if (s < end && *s == ',') {
            s++;
            continue;
        }
        if (s < end && *s == '\r') s++;
        if (s < end && *s == '\n') s++;
        break;
    }
    *p = s;
    return n;
}

static const char *cell(const opdb_strbuf *cells, const size_t *offs, size_t n, int col) {
    return col >= 0 && (size_t)col < n ? cells->p + offs[col] : NULL;
}

static bool int_of(const char *s, long long *v) { return s && opdb_py_int(s, strlen(s), v); }

static int load(const opdb_comm_validate_opts *o, const char *path, vfile *vf, FILE *err_out, opdb_err *err) {
    opdb_strbuf sb, cells;
    opdb_sb_init(&sb);
    opdb_sb_init(&cells);
    if (opdb_read_file(path, &sb, err)) {
        opdb_sb_free(&sb);
        return -1;
    }
    const char *p = sb.p, *end = sb.p + sb.n;
    if (!o->reference_quirks && end - p >= 3 && !memcmp(p, "\xef\xbb\xbf", 3)) p += 3;
    size_t offs[256];
    int cb = -1, cn = -1, ct = -1, cd = -1, cavg = -1;
    size_t nh = csv_record(&p, end, &cells, offs, 256);
    for (size_t i = 0; i < nh && i < 256; i++) {
        const char *h = cells.p + offs[i];
        if (!strcmp(h, OPDB_COMM_COL_BYTES)) cb = (int)i;
        else if (!strcmp(h, OPDB_COMM_COL_NDEV)) cn = (int)i;
        else if (!strcmp(h, OPDB_COMM_COL_TIER)) ct = (int)i;
        else if (!strcmp(h, OPDB_COMM_COL_DUR)) cd = (int)i;
        else if (!strcmp(h, OPDB_COL_MB_DUR)) cavg = (int)i;
    }
    if (cavg >= 0) cd = cavg;
    int rc = 0;
    for (long line = 2; p < end; line++) {
        size_t nc = csv_record(&p, end, &cells, offs, 256);
        if (nc == 1 && cells.p[0] == '\0') continue; /* blank line: csv yields no row */
        if (nc > 256) nc = 256;
        long long b, n, t = 1;
        double d;
        const char *ds = cell(&cells, offs, nc, cd);
        bool ok = int_of(cell(&cells, offs, nc, cb), &b) && int_of(cell(&cells, offs, nc, cn), &n) &&
                  (ct < 0 || int_of(cell(&cells, offs, nc, ct), &t)) && ds && opdb_py_float(ds, strlen(ds), &d);
        if (!ok) {
            if (!o->reference_quirks) fprintf(err_out, "opdb comm validate: %s:%ld: row ignored (unparsable cell)\n", path, line);
            continue;
        }
        if (t < 0 || t > 2) {
            if (o->reference_quirks) {
                rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s:%ld: topology_tier %lld is not 0, 1 or 2 (the reference "
                               "stops here)", path, line, t);
                break;
            }
            fprintf(err_out, "opdb comm validate: %s:%ld: bad row: topology_tier %lld is not 0, 1 or 2\n", path, line, t);
            vf->bad++;
            continue;
        }
        if (!o->reference_quirks && (!(d > 0) || isinf(d) || n < 2)) {
            fprintf(err_out, "opdb comm validate: %s:%ld: bad row: %s\n", path, line,
                    n < 2 ? "num_devices below 2 has no collective to model" : "duration is not a positive finite number");
            vf->bad++;
            continue;
        }
        vrow r = {b, n, (int)t, d, opdb_comm_predict_us(vf->op, b, n, (int)t), 0, NULL};
        r.ratio = r.pred > 0 ? d / r.pred : INFINITY;
        double T = o->tolerance;
        if (1 / T <= r.ratio && r.ratio <= T) r.status = "PASS", vf->pass++;
        else if (1 / (2 * T) <= r.ratio && r.ratio <= 2 * T) r.status = "WARN", vf->warn++;
        else r.status = "FAIL", vf->fail++;
        vf->rows = opdb_xrealloc(vf->rows, (vf->n + 1) * sizeof *vf->rows);
        vf->rows[vf->n++] = r;
    }
    opdb_sb_free(&sb);
    opdb_sb_free(&cells);
    return rc;
}

static const char *fx(char *buf, double v, int dec) {
    opdb_py_fmt_fixed(buf, 64, v, dec);
    return buf;
}

static const char k_rule[] = "======================================================================";

/* fits per (n_dev, tier), first-seen order */
static size_t fits_of(const vfile *vf, opdb_comm_fit *fits, long long *keys_n, int *keys_t) {
    size_t nk = 0;
    double *m = opdb_xmalloc((vf->n + 1) * sizeof *m), *t = opdb_xmalloc((vf->n + 1) * sizeof *t);
    for (size_t i = 0; i < vf->n; i++) {
        size_t k = 0;
        while (k < nk && !(keys_n[k] == vf->rows[i].n && keys_t[k] == vf->rows[i].tier)) k++;
        if (k < nk) continue;
        keys_n[nk] = vf->rows[i].n, keys_t[nk] = vf->rows[i].tier;
        size_t np = 0;
        for (size_t j = i; j < vf->n; j++)
            if (vf->rows[j].n == keys_n[nk] && vf->rows[j].tier == keys_t[nk])
                m[np] = (double)vf->rows[j].bytes, t[np++] = vf->rows[j].meas;
        opdb_comm_fit_points(m, t, np, &fits[nk++]);
    }
    free(m), free(t);
    return nk;
}

static double fit_bw(const opdb_comm_fit *f) { return f->beta_us_per_byte > 0 ? 1e-3 / f->beta_us_per_byte : INFINITY; }

static void print_text(const opdb_comm_validate_opts *o, vfile *vf, FILE *out) {
    char a[64], b[64], c[64];
    fprintf(out, "\n%s\n  %s  (%zu rows, tolerance=%sx)\n  PASS=%d  WARN=%d  FAIL=%d", k_rule, opdb_comm_op_name(vf->op),
            vf->n, fx(a, o->tolerance, 1), vf->pass, vf->warn, vf->fail);
    if (vf->bad) fprintf(out, "  BAD=%zu", vf->bad);
    fputc('\n', out);
    if (vf->n) {
        double sum = 0, mn = vf->rows[0].ratio, mx = mn;
        for (size_t i = 0; i < vf->n; i++) {
            double r = vf->rows[i].ratio;
            sum += r;
            if (i && r < mn) mn = r; /* Python's min/max: a nan first stays */
            if (i && r > mx) mx = r;
        }
        fprintf(out, "  ratio: mean=%sx  min=%sx  max=%sx\n", fx(a, sum / (double)vf->n, 2), fx(b, mn, 2), fx(c, mx, 2));
    }
    fprintf(out, "%s\n", k_rule);
    if (o->verbose || vf->warn || vf->fail) {
        fprintf(out, "  %-6s  %12s  %5s  %4s  %10s  %10s  %6s\n  ", "status", "msg_bytes", "n_dev", "tier", "measured",
                "predicted", "ratio");
        for (int i = 0; i < 65; i++) fputc('-', out);
        fputc('\n', out);
        for (size_t i = 0; i < vf->n; i++) {
            const vrow *r = &vf->rows[i];
            if (!o->verbose && r->status[0] == 'P') continue;
            fprintf(out, "  %-6s  %12lld  %5lld  %4d  %10s  %10s  %6sx\n", r->status, r->bytes, r->n, r->tier,
                    fx(a, r->meas, 2), fx(b, r->pred, 2), fx(c, r->ratio, 2));
        }
    }
    if (o->reference_quirks || !vf->n) return;
    opdb_comm_fit *fits = opdb_xmalloc(vf->n * sizeof *fits);
    long long *kn = opdb_xmalloc(vf->n * sizeof *kn);
    int *kt = opdb_xmalloc(vf->n * sizeof *kt);
    size_t nk = fits_of(vf, fits, kn, kt);
    fprintf(out, "  fit: t = alpha + m/bw, least squares per (n_dev, tier)\n");
    fprintf(out, "  %5s  %4s  %6s  %10s  %10s  %7s  %7s  %7s\n", "n_dev", "tier", "points", "alpha_us", "bw_GB/s", "R^2",
            "med_res", "max_res");
    for (size_t k = 0; k < nk; k++) {
        char d[64], e[64], f[64];
        fprintf(out, "  %5lld  %4d  %6zu  %10s  %10s  %7s  %7s  %7s\n", kn[k], kt[k], fits[k].n,
                fx(a, fits[k].alpha_us, 2), fx(b, fit_bw(&fits[k]), 2), fx(c, fits[k].r2, 4),
                fx(d, fits[k].med_rel_res, 4), fx(e, fits[k].max_rel_res, 4));
        (void)f;
    }
    free(fits), free(kn), free(kt);
}

static void print_json(const opdb_comm_validate_opts *o, vfile *vf, size_t nf, const char *verdict, FILE *out) {
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    opdb_json j;
    opdb_json_init(&j, &sb);
    opdb_json_begin_object(&j);
    opdb_json_key(&j, "csv_dir");
    opdb_json_string(&j, o->csv_dir);
    opdb_json_key(&j, "tolerance");
    opdb_json_float(&j, o->tolerance);
    opdb_json_key(&j, "ops");
    opdb_json_begin_array(&j);
    for (size_t f = 0; f < nf; f++) {
        vfile *v = &vf[f];
        opdb_json_begin_object(&j);
        opdb_json_key(&j, "op");
        opdb_json_string(&j, opdb_comm_op_name(v->op));
        const char *ck[] = {"pass", "warn", "fail"};
        int cv[] = {v->pass, v->warn, v->fail};
        for (int i = 0; i < 3; i++) {
            opdb_json_key(&j, ck[i]);
            opdb_json_int(&j, cv[i]);
        }
        opdb_json_key(&j, "bad");
        opdb_json_int(&j, (long long)v->bad);
        opdb_json_key(&j, "rows");
        opdb_json_begin_array(&j);
        for (size_t i = 0; i < v->n; i++) {
            const vrow *r = &v->rows[i];
            opdb_json_begin_object(&j);
            opdb_json_key(&j, "status");
            opdb_json_string(&j, r->status);
            opdb_json_key(&j, "message_bytes");
            opdb_json_int(&j, r->bytes);
            opdb_json_key(&j, "num_devices");
            opdb_json_int(&j, r->n);
            opdb_json_key(&j, "topology_tier");
            opdb_json_int(&j, r->tier);
            opdb_json_key(&j, "measured_us");
            opdb_json_float(&j, r->meas);
            opdb_json_key(&j, "predicted_us");
            opdb_json_float(&j, r->pred);
            opdb_json_key(&j, "ratio");
            opdb_json_float(&j, r->ratio);
            opdb_json_end_object(&j);
        }
        opdb_json_end_array(&j);
        opdb_json_key(&j, "fits");
        opdb_json_begin_array(&j);
        if (v->n) {
            opdb_comm_fit *fits = opdb_xmalloc(v->n * sizeof *fits);
            long long *kn = opdb_xmalloc(v->n * sizeof *kn);
            int *kt = opdb_xmalloc(v->n * sizeof *kt);
            size_t nk = fits_of(v, fits, kn, kt);
            for (size_t k = 0; k < nk; k++) {
                opdb_json_begin_object(&j);
                opdb_json_key(&j, "num_devices");
                opdb_json_int(&j, kn[k]);
                opdb_json_key(&j, "topology_tier");
                opdb_json_int(&j, kt[k]);
                opdb_json_key(&j, "points");
                opdb_json_int(&j, (long long)fits[k].n);
                const char *fk[] = {"alpha_us", "beta_us_per_byte", "bandwidth_gbps", "r2", "median_rel_residual",
                                    "max_rel_residual"};
                double fv[] = {fits[k].alpha_us, fits[k].beta_us_per_byte, fit_bw(&fits[k]), fits[k].r2,
                               fits[k].med_rel_res, fits[k].max_rel_res};
                for (int i = 0; i < 6; i++) {
                    opdb_json_key(&j, fk[i]);
                    opdb_json_float(&j, fv[i]);
                }
                opdb_json_end_object(&j);
            }
            free(fits), free(kn), free(kt);
        }
        opdb_json_end_array(&j);
        opdb_json_end_object(&j);
    }
    opdb_json_end_array(&j);
    opdb_json_key(&j, "result");
    opdb_json_string(&j, verdict);
    opdb_json_end_object(&j);
    fwrite(sb.p, 1, sb.n, out);
    fputc('\n', out);
    opdb_sb_free(&sb);
}

static int comm_validate(const opdb_comm_validate_opts *o, FILE *out, FILE *err_out, opdb_err *err) {
    if (!opdb_is_dir(o->csv_dir)) {
        fprintf(err_out, "ERROR: %s is not a directory\n", o->csv_dir);
        return 1;
    }
    char a[64];
    if (!o->json)
        fprintf(out, "C9 Comm Alignment Validation\n  csv_dir   : %s\n  tolerance : %sx\n", o->csv_dir,
                fx(a, o->tolerance, 1));
    vfile vf[4];
    size_t nf = 0;
    int rc = 0;
    for (int i = 0; i < 4 && rc == 0; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s.csv", opdb_comm_op_kernel(k_order[i]));
        char *path = opdb_path_join(o->csv_dir, name);
        if (!opdb_is_file(path)) {
            if (!o->json) fprintf(out, "  [SKIP] %s not found in %s\n", name, o->csv_dir);
        } else {
            vf[nf] = (vfile){k_order[i], NULL, 0, 0, 0, 0, 0};
            rc = load(o, path, &vf[nf], err_out, err);
            nf++;
        }
        free(path);
    }
    if (rc == 0) {
        int p = 0, w = 0, f = 0;
        size_t rows = 0, bad = 0;
        for (size_t i = 0; i < nf; i++) p += vf[i].pass, w += vf[i].warn, f += vf[i].fail, rows += vf[i].n, bad += vf[i].bad;
        bool ok = f == 0 && bad == 0;
        if (o->totals) *o->totals = (opdb_comm_validate_totals){nf, rows, bad, p, w, f};
        /* nothing checked is not a pass (the reference says OK) */
        const char *verdict = !rows && !bad && !o->reference_quirks ? "NO DATA" : ok ? "OK" : "FAILED";
        if (o->json) {
            print_json(o, vf, nf, verdict, out);
        } else {
            for (size_t i = 0; i < nf; i++) print_text(o, &vf[i], out);
            fprintf(out, "\n%s\n  TOTAL: %zu rows  PASS=%d  WARN=%d  FAIL=%d", k_rule, rows, p, w, f);
            if (bad) fprintf(out, "  BAD=%zu", bad);
            fprintf(out, "\n  Result: %s\n%s\n", verdict, k_rule);
        }
        if (!rows && !bad && !o->reference_quirks)
            fprintf(err_out, "opdb comm validate: warning: no row was checked in %s (no hcom_*.csv with rows)%s\n",
                    o->csv_dir, o->strict ? "" : "; --strict makes this an error");
        if (!rows && o->strict) ok = false;
        rc = ok ? 0 : 1;
    }
    for (size_t i = 0; i < nf; i++) free(vf[i].rows);
    return rc;
}

static void comm_validate_defaults(opdb_comm_validate_opts *o) {
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->tolerance = 2.0;
}

OPDB_OPTS_INIT_SIZED(opdb_comm_validate_opts, comm_validate_defaults)

int opdb_comm_validate(const opdb_comm_validate_opts *o, FILE *out, FILE *err_out, opdb_err *err) {
    if (opdb_opts_check(o, o ? o->size : 0, sizeof *o, "opdb_comm_validate_opts", err)) return -1;
    opdb_call_scope saved = opdb_call_enter(&o->log);
    OPDB_CALL_GUARD(saved, err);
    opdb_call_set_modes(&o->modes);
    int rc = comm_validate(o, out, err_out, err);
    opdb_call_leave(&saved);
    return rc;
}
