// The C entry point over lld's ELF driver. lld keeps global state while it
// links, so callers serialise calls (the Rust side holds a mutex).
#include <string>
#include <vector>

#include "lld/Common/Driver.h"
#include "llvm/Support/raw_ostream.h"

LLD_HAS_DRIVER(elf)

// Runs `ld.lld` with `argv` (argv[0] is the program name). Diagnostics are
// written into `diag` (capacity `diag_len`, NUL-terminated, truncated).
// Returns lld's exit code; *can_run_again is 0 once lld says its state is
// unusable (then no further link may run in this process).
extern "C" int tritium_lld_elf(const char **argv, int argc, char *diag, unsigned long diag_len, int *can_run_again) {
    std::vector<const char *> args(argv, argv + argc);
    std::string out, err;
    llvm::raw_string_ostream out_stream(out), err_stream(err);
    lld::Result result = lld::lldMain(args, out_stream, err_stream, {{lld::Gnu, &lld::elf::link}});
    out_stream.flush();
    err_stream.flush();
    std::string all = err + out;
    if (diag_len > 0) {
        unsigned long n = all.size() < diag_len - 1 ? all.size() : diag_len - 1;
        all.copy(diag, n);
        diag[n] = '\0';
    }
    *can_run_again = result.canRunAgain ? 1 : 0;
    return result.retCode;
}
