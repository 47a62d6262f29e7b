/* See agg_metric.h. */
#include "update/agg_metric.h"

#include "opdb/schema.h"

const unsigned char agg_metric_half[OPDB_NMETRICS] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                                      1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0};
const unsigned char agg_metric_pos[OPDB_NMETRICS] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
                                                     0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13};
