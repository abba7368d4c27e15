// glibc's malloc controls and statistics (mallopt, malloc_trim, mallinfo2), which Swift's
// Glibc module does not export: the objects benchmark measures the memory of faults with them.
#include <malloc.h>
