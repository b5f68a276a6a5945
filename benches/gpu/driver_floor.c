/* The CUDA driver's own launch cost, apart from any Python: cuLaunchKernel
 * of an empty kernel in the configurations a launcher could choose (stream
 * kind, argument passing, cuLaunchKernelEx, block size). Built and run by
 * benches/gpu/launch_profile.py with the host's C compiler when there is one;
 * no CUDA toolkit needed (the driver is dlopen'ed, the kernel is PTX). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUstream;
typedef int CUdevice;
typedef struct {
    unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
    CUstream hStream;
    void *attrs;
    unsigned numAttrs;
} LaunchConfig;

static CUresult (*cuInit)(unsigned);
static CUresult (*cuDeviceGet)(CUdevice *, int);
static CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
static CUresult (*cuCtxSetCurrent)(CUcontext);
static CUresult (*cuCtxGetCurrent)(CUcontext *);
static CUresult (*cuCtxSynchronize)(void);
static CUresult (*cuModuleLoadData)(CUmodule *, const void *);
static CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
static CUresult (*cuStreamCreate)(CUstream *, unsigned);
static CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                  unsigned, CUstream, void **, void **);
static CUresult (*cuLaunchKernelEx)(const LaunchConfig *, CUfunction, void **, void **);

static const char *PTX =
    ".version 8.0\n.target sm_80\n.address_size 64\n"
    ".visible .entry two(.param .u64 p0, .param .u32 p1) { ret; }\n"
    ".visible .entry none() { ret; }\n";

static void *sym(void *lib, const char *name) {
    void *f = dlsym(lib, name);
    if (!f) { fprintf(stderr, "missing %s\n", name); exit(1); }
    return f;
}

#define CK(x) do { CUresult r_ = (x); if (r_) { fprintf(stderr, "%s: error %d\n", #x, r_); exit(1); } } while (0)

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

enum { PARAMS, BUFFER, EX, NOARGS };

static CUfunction f_two, f_none;
static uint64_t p0;
static uint32_t p1 = 5;

static void launch(int how, CUstream s, unsigned block) {
    void *params[] = {&p0, &p1};
    switch (how) {
    case PARAMS:
        CK(cuLaunchKernel(f_two, 1, 1, 1, block, 1, 1, 0, s, params, NULL));
        break;
    case BUFFER: {
        struct { uint64_t a; uint32_t b; uint32_t pad; } buf = {p0, p1, 0};
        size_t size = 12;
        void *extra[] = {(void *)1, &buf, (void *)2, &size, (void *)0};
        CK(cuLaunchKernel(f_two, 1, 1, 1, block, 1, 1, 0, s, NULL, extra));
        break;
    }
    case EX: {
        LaunchConfig c = {1, 1, 1, block, 1, 1, 0, s, NULL, 0};
        CK(cuLaunchKernelEx(&c, f_two, params, NULL));
        break;
    }
    case NOARGS:
        CK(cuLaunchKernel(f_none, 1, 1, 1, block, 1, 1, 0, s, NULL, NULL));
        break;
    }
}

/* median per-launch time of bursts of 200 launches into an idle queue */
static double burst_median(int how, CUstream s, unsigned block, int bursts) {
    enum { PER = 200 };
    double per[128];
    for (int b = 0; b < bursts; b++) {
        double t0 = now_us();
        for (int i = 0; i < PER; i++) launch(how, s, block);
        per[b] = (now_us() - t0) / PER;
        CK(cuCtxSynchronize());
    }
    qsort(per, bursts, sizeof per[0], cmp);
    return per[bursts / 2];
}

static void measure(const char *name, int how, CUstream s, unsigned block) {
    enum { BURSTS = 100, PER = 200, B2B = 20000 };
    double per[BURSTS];
    for (int i = 0; i < 2000; i++) launch(how, s, block);
    CK(cuCtxSynchronize());
    for (int b = 0; b < BURSTS; b++) {
        double t0 = now_us();
        for (int i = 0; i < PER; i++) launch(how, s, block);
        per[b] = (now_us() - t0) / PER;
        CK(cuCtxSynchronize());
    }
    qsort(per, BURSTS, sizeof per[0], cmp);
    double t0 = now_us();
    for (int i = 0; i < B2B; i++) launch(how, s, block);
    CK(cuCtxSynchronize());
    double b2b = (now_us() - t0) / B2B;
    printf("  %-44s burst median %6.3f  min %6.3f  back-to-back %6.3f us\n", name, per[BURSTS / 2], per[0], b2b);
}

int main(void) {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (!lib) { fprintf(stderr, "no libcuda.so.1\n"); return 1; }
    cuInit = sym(lib, "cuInit");
    cuDeviceGet = sym(lib, "cuDeviceGet");
    cuDevicePrimaryCtxRetain = sym(lib, "cuDevicePrimaryCtxRetain");
    cuCtxSetCurrent = sym(lib, "cuCtxSetCurrent");
    cuCtxGetCurrent = sym(lib, "cuCtxGetCurrent");
    cuCtxSynchronize = sym(lib, "cuCtxSynchronize");
    cuModuleLoadData = sym(lib, "cuModuleLoadData");
    cuModuleGetFunction = sym(lib, "cuModuleGetFunction");
    cuStreamCreate = sym(lib, "cuStreamCreate");
    cuLaunchKernel = sym(lib, "cuLaunchKernel");
    cuLaunchKernelEx = sym(lib, "cuLaunchKernelEx");
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cuModuleLoadData(&mod, PTX));
    CK(cuModuleGetFunction(&f_two, mod, "two"));
    CK(cuModuleGetFunction(&f_none, mod, "none"));
    CUstream nonblocking, blocking;
    CK(cuStreamCreate(&nonblocking, 1));
    CK(cuStreamCreate(&blocking, 0));
    CUstream per_thread = (CUstream)2;

    int n = 1000000;
    CUcontext c;
    double t0 = now_us();
    for (int i = 0; i < n; i++) cuCtxGetCurrent(&c);
    printf("cuCtxGetCurrent: %.3f us\n", (now_us() - t0) / n);
    printf("cuLaunchKernel of an empty kernel, grid 1:\n");
    measure("legacy stream, 2 args, 128 threads", PARAMS, NULL, 128);
    measure("legacy stream, 2 args, 32 threads", PARAMS, NULL, 32);
    measure("legacy stream, no args, 128 threads", NOARGS, NULL, 128);
    measure("legacy stream, 2 args as one buffer", BUFFER, NULL, 128);
    measure("legacy stream, cuLaunchKernelEx", EX, NULL, 128);
    measure("per-thread default stream, 2 args", PARAMS, per_thread, 128);
    measure("created blocking stream, 2 args", PARAMS, blocking, 128);
    measure("created non-blocking stream, 2 args", PARAMS, nonblocking, 128);
    measure("legacy stream again (drift check)", PARAMS, NULL, 128);

    /* the two launch calls a launcher could use, alternating so drift lands on both */
    enum { ROUNDS = 9 };
    double plain[ROUNDS], ex[ROUNDS], ratio[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        plain[r] = burst_median(PARAMS, NULL, 128, 40);
        ex[r] = burst_median(EX, NULL, 128, 40);
        ratio[r] = ex[r] / plain[r];
    }
    qsort(plain, ROUNDS, sizeof plain[0], cmp);
    qsort(ex, ROUNDS, sizeof ex[0], cmp);
    qsort(ratio, ROUNDS, sizeof ratio[0], cmp);
    printf("alternating %d rounds, legacy stream: cuLaunchKernel %.3f us, cuLaunchKernelEx %.3f us (medians); "
           "Ex/plain per round median %.3f (range %.3f..%.3f)\n",
           ROUNDS, plain[ROUNDS / 2], ex[ROUNDS / 2], ratio[ROUNDS / 2], ratio[0], ratio[ROUNDS - 1]);
    return 0;
}
