// A weak entry point for the fuzz target built without `--sanitize=fuzzer`.
//
// libFuzzer brings its own strong `main`; without it (a plain `swift build`, CI), this one links
// instead and replays the files named on the command line through the same entry point, so
// the target always builds and a corpus or a crasher can be rerun without the fuzzer.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE...   (replays inputs; build with --sanitize=fuzzer to fuzz)\n", argv[0]);
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) { perror(argv[i]); return 1; }
        size_t cap = 1 << 16, n = 0;
        uint8_t *buf = malloc(cap);
        size_t r;
        while (buf && (r = fread(buf + n, 1, cap - n, f)) > 0) {
            n += r;
            if (n == cap) { cap *= 2; buf = realloc(buf, cap); }
        }
        fclose(f);
        if (!buf) { fprintf(stderr, "out of memory reading %s\n", argv[i]); return 1; }
        LLVMFuzzerTestOneInput(buf, n);
        free(buf);
        printf("%s: ok (%zu bytes)\n", argv[i], n);
    }
    return 0;
}

// SwiftPM links an executable target's entry point as `<target>_main`, aliased to `main`: one
// for each fuzz target (each links only its own).
__attribute__((weak)) int strata_fuzz_main(int argc, char **argv) { return replay(argc, argv); }
__attribute__((weak)) int strata_fuzz_records_main(int argc, char **argv) { return replay(argc, argv); }
