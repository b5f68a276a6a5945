// The C entry point over lld's ELF driver. lld keeps global state while it
// links, so callers serialise calls (the Rust side holds a mutex).
#include <string>
#include <vector>

#include "lld/Common/Driver.h"
#include "llvm/Support/CommandLine.h"
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

// Sets the LLVM command-line option `name` to `value`, or back to its default
// when `value` is null, as if it had never been given (its occurrence count
// is reset too, so it may be set again). Returns 0, 1 for an option LLVM does
// not have, 2 for a value it does not accept. Callers serialise calls with
// links (lld resets every option) and with code generation that reads them.
extern "C" int tritium_llvm_option(const char *name, const char *value) {
    llvm::StringMap<llvm::cl::Option *> &options = llvm::cl::getRegisteredOptions();
    auto found = options.find(name);
    if (found == options.end())
        return 1;
    llvm::cl::Option *option = found->second;
    option->reset();
    if (value && option->addOccurrence(0, name, value))
        return 2;
    return 0;
}
