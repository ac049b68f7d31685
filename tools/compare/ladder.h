/* qmetric-compare: a ladder's renditions (ladder.c) and its results
 * (ladderout.c).
 *
 * Copyright (C) 2026 the gst-qmetric authors.  LGPL-2.1-or-later.
 */
#ifndef QMC_LADDER_H
#define QMC_LADDER_H

#include "compare.h"

/* A rendition: a distorted side of the run, first so that app->dists'
 * Side pointers are its Rend pointers, and what its row says. */
typedef struct {
    Side s;
    char *name;                /* NAME=PATH's NAME, else the file's name */
    guint64 size;              /* bytes; 0 unknown */
    char *codec;               /* from the stream's caps, as the missing-plugin names go */
    char *group;               /* the manifest's series for the chart, or NULL */
    char *series;              /* the chart's series it is drawn in (results) */
    gboolean rate_warned;      /* its frame rate differs from the reference's: said once */
    gboolean failed;           /* below a --fail-below threshold */
    guint tag_bitrate;         /* bit/s from the stream's tags; 0 none */
    gint64 container_dur;      /* ns, from the demuxer; -1 unknown */
    GstStructure *summary;
    Output log;
} Rend;

/* After the run: the table, the gates, the CSV, JSON and chart; every
 * output reaches its destination, or none does when the run failed.
 * Returns the exit status. */
int qmc_ladder_report(App *app, Output *csv, Output *json, Output *rd);

#endif
