/* qmetric-compare: the partial file of a chunk (chunkpart.c), for chunk.c.
 *
 * Copyright (C) 2026 the gst-qmetric authors.  LGPL-2.1-or-later.
 */
#ifndef QMC_CHUNKPART_H
#define QMC_CHUNKPART_H

#include "compare.h"

typedef struct QmcChunkPart QmcChunkPart;

/* Before the run: the destination (--partial) and each input's record
 * (fingerprint, size).  Exits 2 with one line when an input cannot be
 * recorded (a pipe, a URI that is not a local file).  Frames start .. end
 * - 1 are the chunk's (end G_MAXUINT64 while not known). */
QmcChunkPart *qmc_chunk_part_new(App *app, guint64 start, guint64 end);
/* From each side's streaming thread: frame `frame` as the element receives
 * it; its hash is kept when it is near the chunk's ends. */
void qmc_chunk_part_frame(QmcChunkPart *p, int side, guint64 frame, GstBuffer *buf,
                          const GstVideoInfo *info);
/* The first scores: the features, in the element's order.  FALSE after
 * qmc_fail(). */
gboolean qmc_chunk_part_open(App *app, QmcChunkPart *p, unsigned n, const char *const *names,
                             int w, int h);
/* The next frame's row. */
void qmc_chunk_part_row(QmcChunkPart *p, const double *v, const guint8 *present);
/* The end: the inputs as decoded, the element's settings (the summary's
 * "identity"), the frame hashes; the file reaches its destination unless
 * the run failed (then it is removed). */
void qmc_chunk_part_close(App *app, QmcChunkPart *p, gboolean end_of_input, double seconds);

/* chunk.c: the --frame_skip_* of side i (the chunk took it over) */
guint64 qmc_chunk_skip(App *app, int side);

#endif
