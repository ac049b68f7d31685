/* gst-qmetric: a tool never writes over one of its inputs.  Two names are
 * the same file when stat() gives the same device and inode: symbolic
 * links (followed) and hard links are caught, not only equal strings.
 * Checked before anything is opened for writing.
 */
#ifndef QM_SAMEFILE_H
#define QM_SAMEFILE_H

#include <stdbool.h>
#include <stddef.h>

/** Whether a and b both exist and are the same file.  Character devices
 *  (/dev/null, /dev/stdout on a terminal) are never "the same file": writing
 *  to them destroys nothing. */
bool qm_same_file(const char *a, const char *b);

/** The first of inputs[0..n) that `output` is the same file as, or NULL
 *  (NULL entries are skipped). */
const char *qm_output_is_input(const char *output, const char *const *inputs, size_t n);

#endif /* QM_SAMEFILE_H */
