/* gst-qmetric: the AVX-512 (F, BW, VL, DQ) instance of the XPSNR twins
 * (xpsnr_tmpl.c has the stages and their method; cpu/xpsnr.c is the
 * specification).  Nothing differs by ISA but the width header: twice the
 * lanes, and the last vector of a row masked.
 */
#include <stdint.h>

#include "x86/vec_avx512.h"

#define XPSNR_DSP_INIT qm_xpsnr_dsp_init_avx512
#include "x86/xpsnr_tmpl.c"
