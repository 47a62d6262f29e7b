/* See bench_json.h. */
#include "replay/bench_json.h"

#include <string.h>

#include "opdb/json_writer.h"

void bench_totals(const bench_ctx *c) {
    opdb_bench_totals *t = c->o->totals;
    if (!t) return;
    memset(t, 0, sizeof *t);
    for (size_t i = 0; i < c->nst; i++) {
        t->measured += c->st[i].measured;
        t->failed += c->st[i].failed;
        t->skipped += c->st[i].skipped;
    }
    t->operators = c->nst;
    t->unconverged = c->unconverged;
    t->planned = c->planned;
    t->modelled = c->modelled;
    t->plan_low_s = c->plan_lo_s;
    t->plan_high_s = c->plan_hi_s;
}

static void key_int(opdb_json *j, const char *k, long long v) {
    opdb_json_key(j, k);
    opdb_json_int(j, v);
}

static const char *status_name(const op_status *s) {
    if (s->kind == ST_SKIPPED) return "skipped";
    if (s->kind == ST_FAILED || s->failed || s->unmeasured) return "failed";
    return "success";
}

void bench_json(const bench_ctx *c, const char *writeback, opdb_strbuf *out) {
    const opdb_bench_opts *o = c->o;
    opdb_json j;
    opdb_json_init(&j, out);
    opdb_json_begin_object(&j);
    opdb_json_key(&j, "command");
    opdb_json_string(&j, "bench");
    opdb_json_key(&j, "database");
    opdb_json_string(&j, o->db_dir);
    opdb_json_key(&j, "backend");
    opdb_json_string(&j, c->b->name);
    opdb_json_key(&j, "plan");
    opdb_json_bool(&j, o->plan_only);
    long measured = 0, failed = 0, skipped = 0;
    for (size_t i = 0; i < c->nst; i++) {
        measured += c->st[i].measured;
        failed += c->st[i].failed;
        skipped += c->st[i].skipped;
    }
    if (o->plan_only) {
        key_int(&j, "rows_planned", c->planned);
        key_int(&j, "rows_model_estimate", c->modelled);
        opdb_json_key(&j, "estimate_s");
        opdb_json_float(&j, c->plan_lo_s);
        opdb_json_key(&j, "estimate_max_s");
        opdb_json_float(&j, c->plan_hi_s);
    } else {
        key_int(&j, "rows_measured", measured);
        key_int(&j, "rows_failed", failed);
        key_int(&j, "rows_skipped", skipped);
        key_int(&j, "rows_unconverged", c->unconverged);
    }
    opdb_json_key(&j, "operators");
    opdb_json_begin_array(&j);
    for (size_t i = 0; i < c->nst; i++) {
        const op_status *s = &c->st[i];
        opdb_json_begin_object(&j);
        opdb_json_key(&j, "operator");
        opdb_json_string(&j, s->op);
        opdb_json_key(&j, "status");
        opdb_json_string(&j, status_name(s));
        key_int(&j, "measured", s->measured);
        key_int(&j, "failed", s->failed);
        key_int(&j, "skipped", s->skipped);
        opdb_json_key(&j, "reason");
        if (s->reason && strcmp(status_name(s), "success")) opdb_json_string(&j, s->reason);
        else opdb_json_null(&j);
        opdb_json_end_object(&j);
    }
    opdb_json_end_array(&j);
    opdb_json_key(&j, "write_back"); /* the report of `opdb update --json` */
    if (writeback && writeback[0] == '{') opdb_json_raw(&j, writeback);
    else opdb_json_null(&j);
    opdb_json_end_object(&j);
}
