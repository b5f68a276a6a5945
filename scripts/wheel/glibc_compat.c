/* Definitions the manylinux_2_28 wheel links into tritium._core for the three
 * glibc symbols newer than 2.28 that Debian 12's static archives reference
 * (LLVM 19's libLLVMSupport.a and GCC 12's libstdc++.a were compiled against
 * glibc 2.36's headers). zig's glibc 2.28 stubs have none of them, so without
 * these the extension would import on glibc >= 2.36 only. Compiled against
 * glibc 2.28's headers by scripts/wheel/zig_link.sh; hidden, so nothing
 * outside the extension binds to them. */
#include <errno.h>
#include <malloc.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/random.h>

#define HIDDEN __attribute__((visibility("hidden")))

/* glibc 2.32: non-zero while the process is known to have one thread, so
 * libstdc++ may skip atomic reference counts. 0 is always correct: every
 * count stays atomic. */
HIDDEN char __libc_single_threaded = 0;

/* glibc 2.33: mallinfo with size_t fields (zig's glibc headers declare the
 * struct for every version). LLVM's Process::GetMallocUsage reads uordblks;
 * mallinfo's int fields are widened. */
#pragma clang diagnostic ignored "-Wdeprecated-declarations"  /* mallinfo: the only one 2.28 has */
HIDDEN struct mallinfo2 mallinfo2(void) {
    struct mallinfo m = mallinfo();
    struct mallinfo2 r = {
        (size_t)(unsigned)m.arena,    (size_t)(unsigned)m.ordblks,  (size_t)(unsigned)m.smblks,
        (size_t)(unsigned)m.hblks,    (size_t)(unsigned)m.hblkhd,   (size_t)(unsigned)m.usmblks,
        (size_t)(unsigned)m.fsmblks,  (size_t)(unsigned)m.uordblks, (size_t)(unsigned)m.fordblks,
        (size_t)(unsigned)m.keepcost,
    };
    return r;
}

/* glibc 2.36: a random 32-bit value from the kernel (getrandom, glibc 2.25;
 * Linux >= 3.17, and manylinux_2_28 systems run >= 4.18). Like glibc's own,
 * it aborts rather than return a predictable value. Used by LLVM's
 * Process::GetRandomNumber and libstdc++'s random_device("arc4random"). */
HIDDEN uint32_t arc4random(void) {
    uint32_t value;
    size_t got = 0;
    while (got < sizeof value) {
        ssize_t n = getrandom((char *)&value + got, sizeof value - got, 0);
        if (n > 0)
            got += (size_t)n;
        else if (n < 0 && errno != EINTR)
            abort();
    }
    return value;
}
