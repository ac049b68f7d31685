/* gst-qmetric: drop the pages of a mapped input file behind the run.
 *
 * The command-line tools read raw and Y4M files in place, through one
 * mapping of the whole file.  Every page a frame's copy touches stays in
 * the process's page tables until the mapping goes, and taking down the
 * page tables of a long title at the end cost as much as a sixth of the
 * run (1080p VMAF on the GPU: 0.23-0.35 s of munmap after a 5,000-frame
 * loop of 1.0 s; docs/benchmarks.md).  A QmPageDrop is told which frames
 * the run is done with, in any order, and a thread of its own removes the
 * pages below the oldest frame still in use from the page tables as the
 * run goes (madvise MADV_DONTNEED), a batch at a time.  The file's pages
 * stay in the page cache: a later touch maps them again, so dropping is
 * never wrong, only a cost, and the mapping's resident size stays bounded
 * however long the title. */
#ifndef QM_PAGEDROP_H
#define QM_PAGEDROP_H

#include <stddef.h>
#include <stdint.h>

typedef struct QmPageDrop QmPageDrop;

/* A dropper for the mapping base .. base + size (its pages are dropped,
 * never unmapped: the caller unmaps after qm_pagedrop_free()).  Frames are
 * numbered from 0 in the order the run reads them.  NULL when out of
 * memory or no thread could start: the caller goes on without. */
QmPageDrop *qm_pagedrop_new(const void *base, size_t size);

/* Frame `index` is no longer read; its bytes end at byte `end` of the
 * mapping.  Any thread, any order; a frame told twice is ignored.  Pages
 * are dropped below the end of the last frame before which every frame
 * has been told (a frame more than QM_PAGEDROP_WINDOW ahead of the oldest
 * one not yet told is ignored, and its pages stay until the end). */
void qm_pagedrop_done(QmPageDrop *d, uint64_t index, size_t end);

#define QM_PAGEDROP_WINDOW 4096

/* Wait until every page that can be dropped now has been; the bytes
 * dropped from the start of the mapping (for tests). */
size_t qm_pagedrop_sync(QmPageDrop *d);

/* Stop the thread and free the dropper (NULL is accepted). */
void qm_pagedrop_free(QmPageDrop *d);

#endif
