/* gst-qmetric: the AVX2 instance of the XPSNR twins (xpsnr_tmpl.c has the
 * stages and their method; cpu/xpsnr.c is the specification).  Nothing
 * differs by ISA but the width header: the last vector of a row is moved
 * back (AVX2 has no 16-bit masked loads) and rows narrower than a vector
 * are copied first.
 */
#include <stdint.h>

#include "x86/vec_avx2.h"

#define XPSNR_DSP_INIT qm_xpsnr_dsp_init_avx2
#include "x86/xpsnr_tmpl.c"
