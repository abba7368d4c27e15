#ifndef CFUZZDRIVER_H
#define CFUZZDRIVER_H
// No declarations: this target only supplies a weak `main` for builds without libFuzzer.
#endif
