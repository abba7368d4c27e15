// libpq, PostgreSQL's own client library (Debian: libpq-dev; Homebrew: libpq).
#if __has_include(<libpq-fe.h>)
#include <libpq-fe.h>
#else
#include <postgresql/libpq-fe.h>
#endif
#include <poll.h>
