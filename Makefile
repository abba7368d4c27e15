# The two commands of the README. Each installs what is missing first (Debian packages).
SWIFT ?= swift

.PHONY: deps bench-deps bench test

PACKAGES = liblz4-dev liblmdb-dev libsqlite3-dev

deps:
	@missing=""; \
	for p in $(PACKAGES); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq $$missing; \
	fi

# Every side-by-side benchmark, release build, fixed seeds: the key-value engine against
# SQLite and LMDB, then the record layer against SQLite with Core Data's recount triggers and
# with incremental triggers. KV_ARGS and RECORDS_ARGS pass options to each (see --help).
# strace counts SQLite's and LMDB's fsyncs in the benchmark.
bench-deps:
	@$(MAKE) --no-print-directory deps PACKAGES="liblz4-dev liblmdb-dev libsqlite3-dev strace"

bench: bench-deps
	$(SWIFT) build -c release --product strata-bench
	.build/release/strata-bench kv $(KV_ARGS)
	.build/release/strata-bench records $(RECORDS_ARGS)

# The whole test suite, release build with testable imports (the debug build is too slow for
# the model-based and crash tests on two cores). Suites run one after another: the concurrency
# stress needs the cooperative pool's two threads for its async writer, and suites running
# beside it would hold them with blocking file I/O.
test: deps
	$(SWIFT) build -c release --build-tests -Xswiftc -enable-testing
	$(SWIFT) test -c release -Xswiftc -enable-testing --skip-build --disable-xctest --no-parallel
