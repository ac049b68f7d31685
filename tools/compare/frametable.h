/* qmetric-compare: the frame index of an encoded input (frametable.c).
 *
 * A whole run numbers the frames as the decoder outputs them: frame N is
 * the N-th decoded frame in presentation order.  A chunk that seeks needs
 * the same numbers without decoding what lies before it.  The index is
 * read from the demuxer's packets (no decoding): each video packet of the
 * codecs listed in frametable.c is one frame, so the packets' presentation
 * timestamps, sorted, give each frame's number.  A packet is a frame of the
 * whole run when the decoder outputs it from a decode that starts at the
 * beginning of the stream:
 *   - it is the first key frame or follows it in decode order, and is not
 *     one of that key frame's leading pictures (PTS below the key frame's:
 *     a decoder starting there cannot output them);
 *   - its [PTS, PTS + duration) is inside the demuxer's segment (edit
 *     lists): the decoder drops what the segment clips away, by the same
 *     rule (gst_segment_clip, 40 ms when there is no duration at all).
 * Every other packet is "excluded": a decoded frame with its timestamp is
 * dropped.  chunk.c checks every decoded frame of a chunk against the
 * index, so a file that breaks these rules fails with a message instead of
 * shifting the numbers.
 *
 * Copyright (C) 2026 the gst-qmetric authors.  LGPL-2.1-or-later.
 */
#ifndef QMC_FRAMETABLE_H
#define QMC_FRAMETABLE_H

#include <gst/gst.h>

/* One video packet as the demuxer gives it (in decode order). */
typedef struct {
    GstClockTime pts, dts, dur;
    gboolean key;
} QmcPacket;

typedef struct QmcFrameTable {
    GstSegment segment;        /* the demuxer's (TIME); what the decoder clips by */
    GstClockTime frame_dur;    /* from the caps' rate, for packets without a duration */
    gboolean complete;         /* read to the end of the stream */
    guint64 packets;           /* packets seen */
    guint64 no_pts;            /* packets without a presentation timestamp */
    GArray *frames;            /* GstClockTime, ascending: frame i's PTS */
    GArray *excluded;          /* GstClockTime, ascending: packets that are no frame */
    GArray *keys;              /* GstClockTime: the key frames' PTS, in decode order */
    GstClockTime straddle;     /* frame 0's timestamp once decoded, when the segment
                                * starts inside it (else NONE) */
    /* reading state */
    gboolean have_key;
    GstClockTime first_key_pts;
    GArray *heap;              /* max-heap of the `need` smallest frame PTS */
    guint64 need;
    guint64 since_change;      /* packets since the heap last changed */
} QmcFrameTable;

/* Where a chunk's decode starts: key frame K, the last one in decode order
 * whose PTS is at most the wanted frame's.  Decoding from K gives every
 * frame of PTS >= PTS(K), which are the frames from `rank` on. */
typedef struct {
    gboolean from_start;       /* K is the stream's first key frame: no seek */
    GstClockTime pts;          /* K's presentation timestamp */
    GstClockTime position;     /* the seek position (stream time) */
    guint64 rank;              /* the first frame decoding from K gives */
} QmcSeekPoint;

/* Frame numbers of a lookup that finds no frame. */
#define QMC_FT_UNKNOWN (-1)    /* no packet has this timestamp */
#define QMC_FT_EXCLUDED (-2)   /* a packet that is no frame (see above) */

/* A table that reads until frame need - 1 is known (G_MAXUINT64: all). */
void qmc_frame_table_init(QmcFrameTable *t, guint64 need);
void qmc_frame_table_clear(QmcFrameTable *t);
/* The next packet in decode order; FALSE once enough are known (the frames
 * below `need` are final: no later packet can come before them). */
gboolean qmc_frame_table_add(QmcFrameTable *t, const QmcPacket *p);
/* Sort what was read; FALSE with the reason in *why (malloc'd) when the
 * packets cannot give frame numbers (no timestamps, no key frame, two
 * packets at one time). */
gboolean qmc_frame_table_finish(QmcFrameTable *t, char **why);
/* The number of the frame with presentation timestamp pts, or
 * QMC_FT_UNKNOWN / QMC_FT_EXCLUDED. */
gint64 qmc_frame_table_lookup(const QmcFrameTable *t, GstClockTime pts);
/* The frames in the table (all of the input's when complete). */
guint64 qmc_frame_table_count(const QmcFrameTable *t);
/* Where to start decoding for frame `rank`; FALSE when it is not in the
 * table. */
gboolean qmc_frame_table_seek_point(const QmcFrameTable *t, guint64 rank, QmcSeekPoint *sp);

/* Read the index of the video of uri from its demuxer, until frame need - 1
 * is known (G_MAXUINT64: to the end).  NULL with the reason in *err
 * (g_malloc'd) when the input cannot be indexed; *unsupported is set when
 * the reason is its format (a codec not listed, packets without timestamps)
 * rather than a broken or missing file. */
QmcFrameTable *qmc_frame_table_read(const char *uri, guint64 need, gboolean *unsupported,
                                    char **err);
void qmc_frame_table_free(QmcFrameTable *t);

/* The frames of uri as a whole run decodes them, counted by decoding (for
 * inputs whose packets carry no timestamps); -1 with *err on failure. */
gint64 qmc_count_decoded(const char *uri, char **err);

#endif
