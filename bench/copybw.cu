/* gst-qmetric: the device's memory-bandwidth ceiling for the per-kernel
 * table (docs/benchmarks.md): a device-to-device cudaMemcpyAsync of a
 * buffer far larger than L2, timed with events, bytes read + written
 * counted.  Built and run by scripts/gpu-kernels.sh:
 *   nvcc -O3 -o copybw bench/copybw.cu && ./copybw [MiB]
 */
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <vector>
#include <cuda_runtime.h>

#define CHECK(x)                                                              \
    do {                                                                      \
        cudaError_t e_ = (x);                                                 \
        if (e_ != cudaSuccess) {                                              \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));          \
            return 1;                                                         \
        }                                                                     \
    } while (0)

int main(int argc, char **argv)
{
    const size_t mib = argc > 1 ? strtoul(argv[1], nullptr, 0) : 1024;
    const size_t n = mib << 20;
    void *a, *b;
    cudaEvent_t t0, t1;
    CHECK(cudaMalloc(&a, n));
    CHECK(cudaMalloc(&b, n));
    CHECK(cudaMemset(a, 1, n));
    CHECK(cudaEventCreate(&t0));
    CHECK(cudaEventCreate(&t1));
    std::vector<float> ms;
    for (int i = 0; i < 12; i++) {
        CHECK(cudaEventRecord(t0));
        CHECK(cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice));
        CHECK(cudaEventRecord(t1));
        CHECK(cudaEventSynchronize(t1));
        float m;
        CHECK(cudaEventElapsedTime(&m, t0, t1));
        if (i >= 2)  /* warm-up excluded */
            ms.push_back(m);
    }
    std::sort(ms.begin(), ms.end());
    const double med = ms[ms.size() / 2];
    cudaDeviceProp p;
    CHECK(cudaGetDeviceProperties(&p, 0));
    printf("{\"device\": \"%s\", \"bytes\": %zu, \"median_ms\": %.4f, "
           "\"read_plus_write_GBps\": %.1f}\n",
           p.name, n, med, 2.0 * n / (med * 1e-3) / 1e9);
    return 0;
}
