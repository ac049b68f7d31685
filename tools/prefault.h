/* gst-qmetric tools: map in the pages of mapped input files ahead of the
 * reader.  qmetric-yuv hands the engine its frames in place from mapped
 * files; the engine's staging threads then take the page faults of every
 * frame on the path to the GPU.  A thread here populates the page tables of
 * the next frames beforehand (MADV_POPULATE_READ, or a read of each page
 * where the kernel lacks it), so the copies find them mapped. */
#ifndef QM_PREFAULT_H
#define QM_PREFAULT_H

#include <stddef.h>
#include <stdint.h>

typedef struct QmPrefault QmPrefault;

/** Start populating frames 0 .. ahead - 1 of n mappings (maps[i], sizes[i]
 *  bytes, frames of `frame` bytes each) on a thread of its own.  NULL when
 *  the thread cannot start (nothing is then populated: not an error). */
QmPrefault *qm_prefault_start(const uint8_t *const maps[], const size_t sizes[], int n,
                              size_t frame, unsigned ahead);

/** The reader is at `frame`: populate up to frame + ahead - 1. */
void qm_prefault_reading(QmPrefault *pf, uint64_t frame);

/** Stop the thread and free (pf may be NULL). */
void qm_prefault_stop(QmPrefault *pf);

#endif
