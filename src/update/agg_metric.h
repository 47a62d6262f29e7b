/* Where op_summary aggregation keeps each hardware metric's sum.
 *
 * Metric m's sum is kept in half agg_metric_half[m] at agg_metric_pos[m]:
 * the AI Core counters and cube utilisation in half 0, the AI Vector
 * counters in half 1.  An operator runs on one kind of core or both, so
 * one half of a launch's counters is often all zero; a half that was zero
 * in every launch is never allocated (its sums are 0.0: adding zeros to 0.0
 * gives 0.0). */
#ifndef OPDB_UPDATE_AGG_METRIC_H
#define OPDB_UPDATE_AGG_METRIC_H

enum { AGG_HALF0_N = 14, AGG_HALF1_N = 11 };
extern const unsigned char agg_metric_half[], agg_metric_pos[];

#endif
