/* gst-qmetric: is this "raw" file really raw?  The first bytes of a file
 * that qmetric-yuv (or qmetric-compare's raw path) would read as planar
 * frames are checked for the signatures of containers and elementary
 * streams: a compressed file read as raw frames gives scores of garbage.
 *
 * Checked: MP4/MOV (an `ftyp`, `moov`, `mdat`, `wide` or `free` box first),
 * Matroska/WebM (EBML magic), MPEG-TS (sync bytes at every 188 or 192
 * bytes, valid packet headers), MPEG-PS and MPEG-1/2 video (pack or
 * sequence header start codes), Y4M (`YUV4MPEG2 `), IVF (`DKIF`), RIFF/AVI,
 * Ogg, FLV, and H.264/HEVC Annex B (a start code at 0 followed by a valid
 * NAL unit header, and a second start code soon after).  The tests are
 * strict enough that planar pictures (flat, noise, ramps) do not match.
 */
#ifndef QM_SNIFF_H
#define QM_SNIFF_H

#include <stddef.h>
#include <stdint.h>

/* Bytes from the start of a file that qm_sniff_container() looks at. */
#define QM_SNIFF_BYTES 4096

/** What the bytes head[0..len) (a file's first bytes, at most
 *  QM_SNIFF_BYTES are read) start like, e.g. "an MP4/MOV file (ftyp
 *  box)"; NULL when nothing known. */
const char *qm_sniff_container(const uint8_t *head, size_t len);

/** qm_sniff_container() on a regular file's first bytes, read with
 *  pread() (the offset does not move); NULL when nothing known or the
 *  file cannot be read. */
const char *qm_sniff_fd(int fd);

#endif /* QM_SNIFF_H */
