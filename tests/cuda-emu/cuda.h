#ifndef EMU_CUDA_H
#define EMU_CUDA_H
typedef struct CUctx_st *CUcontext;
typedef int CUresult;
#endif
