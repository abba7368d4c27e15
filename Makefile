# The two commands of the README. Each installs what is missing first (Debian packages).
SWIFT ?= swift

.PHONY: deps bench-deps bench test beside-tests check fuzz examples docs

PACKAGES = liblz4-dev liblmdb-dev libsqlite3-dev libpq-dev postgresql openssl

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
# with incremental triggers, then the object layer against the record layer and GRDB 7, then
# replication to PostgreSQL (`strata replicate` against a throwaway cluster: rows/s pushed,
# lag at a steady commit rate). SCALE=default (about 2.5 minutes on two cores) or SCALE=full
# (the issue's sizes, three runs each, and objects' growth pass at 1,000,000 items: about 55
# minutes); KV_ARGS, RECORDS_ARGS, OBJECTS_ARGS and REPLICATE_ARGS pass options to each (see
# --help). Each writes its JSON to .build/bench/; REPORT=FILE.html puts them all on one HTML
# page (bar charts and tables). strace counts SQLite's and LMDB's fsyncs in the benchmark.
SCALE ?= default
REPORT ?=
# strata-bench is a package of its own (Benchmarks/Package.swift: GRDB, SQLite and LMDB stay
# out of Strata's), depending on this one by path. Its own build directory: `make test` builds
# this package with -enable-testing into .build/release, and sharing it made each command
# rebuild everything after the other (3-7 minutes). `make test` builds the bench's tests there
# too (debug), so the two share one resolution and one checkout of GRDB.
BENCH_PACKAGE = --package-path Benchmarks --scratch-path .build/bench-build
BENCH = .build/bench-build/release/strata-bench
BENCH_OUT = .build/bench
BENCH_JSON = $(BENCH_OUT)/kv.json $(BENCH_OUT)/records.json $(BENCH_OUT)/objects.json $(BENCH_OUT)/replicate.json

bench-deps:
	@$(MAKE) --no-print-directory deps PACKAGES="liblz4-dev liblmdb-dev libsqlite3-dev libpq-dev strace postgresql openssl"

# `strata-bench replicate` runs this package's `strata` tool, built with the flags `make test`
# uses, into the same .build/release, so neither command rebuilds the root after the other (a
# plain release build there would: the flags differ).
STRATA_TOOL_BUILD = $(SWIFT) build -c release -Xswiftc -enable-testing --product strata

# The benchmark package depends on the root by path; SwiftPM keeps its build plan across a pull
# that adds or removes root sources and then fails on "missing inputs": the plan is dropped first
# (it is remade in a few seconds).
BENCH_PLAN = .build/bench-build/release.yaml .build/bench-build/debug.yaml \
	.build/bench-build/x86_64-unknown-linux-gnu/release/description.json \
	.build/bench-build/x86_64-unknown-linux-gnu/debug/description.json

# A benchmark that fails (a run failed, engines disagreed, a store did not check clean) does
# not stop the others: each prints its table, the page shows what ran, and make fails at the end.
bench: bench-deps
	$(STRATA_TOOL_BUILD)
	@rm -f $(BENCH_PLAN)
	$(SWIFT) build -c release $(BENCH_PACKAGE) --product strata-bench
	@mkdir -p $(BENCH_OUT) && rm -f $(BENCH_JSON)
	@status=0; \
	set -x; \
	$(BENCH) kv --scale $(SCALE) --json $(BENCH_OUT)/kv.json $(KV_ARGS) || status=1; \
	$(BENCH) records --scale $(SCALE) --json $(BENCH_OUT)/records.json $(RECORDS_ARGS) || status=1; \
	$(BENCH) objects --scale $(SCALE) --json $(BENCH_OUT)/objects.json $(OBJECTS_ARGS) || status=1; \
	$(BENCH) replicate --scale $(SCALE) --json $(BENCH_OUT)/replicate.json $(REPLICATE_ARGS) || status=1; \
	$(if $(REPORT),$(BENCH) report $$(ls $(BENCH_JSON) 2>/dev/null) --output $(REPORT) || status=1;) \
	{ set +x; } 2>/dev/null; \
	[ $$status = 0 ] || echo "make bench: a benchmark failed (see its table and failures above)"; \
	exit $$status

# The seeds' scenarios and the record layer's examples (the DocC articles show their code): each
# prints what it checks.
examples: deps
	$(SWIFT) build -c release --product strata-examples
	.build/release/strata-examples all

# The API documentation: a DocC archive per library (catalogs in Sources/<Module>/<Module>.docc,
# and the doc comments), in .build/docs-build/plugins/Swift-DocC/outputs/. Fails on any DocC
# warning (a symbol link that does not resolve, …) or compiler warning in this package; warnings
# in the plugin's own dependencies (its build directory's checkouts/) do not count. .ci/run
# builds it beside the tests (`make test DOCS=1`).
DOC_TARGETS = --target StrataStorage --target StrataRecords --target Strata --target StrataPostgres
DOCS_LOG = .build/docs.log

# Its own build directory, so it can run while `make test`'s suites hold .build (`make test
# DOCS=1`, as .ci/run does): nothing of the release build is reused by the documentation's.
docs: deps
	@mkdir -p .build
	@{ $(SWIFT) package --scratch-path .build/docs-build generate-documentation $(DOC_TARGETS) 2>&1; echo $$? > $(DOCS_LOG).status; } | tee $(DOCS_LOG)
	@status=$$(cat $(DOCS_LOG).status); [ "$$status" = 0 ] || { echo "make docs: generate-documentation failed ($$status)"; exit 1; }
	@if grep "warning:" $(DOCS_LOG) | grep -v "/checkouts/" >/dev/null; then \
	  echo "make docs: warnings (each is repeated below; fix them: a doc comment, a catalog article)"; \
	  grep "warning:" $(DOCS_LOG) | grep -v "/checkouts/"; exit 1; \
	fi

# The whole test suite, release build with testable imports (the debug build is too slow for
# the model-based and crash tests on two cores). Suites run one after another: the concurrency
# stress needs the cooperative pool's two threads for its async writer, and suites running
# beside it would hold them with blocking file I/O. Since they keep about one core busy, the
# benchmark package's build (debug, with its tests) and tests (its report's arithmetic, every
# benchmark at a tiny scale; decision 53) run beside them, their output kept in
# .build/beside.log and printed after the suites' (decision 92); with DOCS=1 (.ci/run) the
# documentation is built there too. `replicate`'s test runs the `strata` tool the first line
# built (.build/release/strata). Each phase's time goes to .build/phase-times (scripts/timed),
# printed at the end.
DOCS ?=
# Through a variable of its own: a recipe line that names $(MAKE) runs even under `make -n`.
BESIDE_MAKE = $(MAKE) --no-print-directory
test: deps
	@mkdir -p .build && : > .build/phase-times
	scripts/timed "build (release, with tests)" $(SWIFT) build -c release --build-tests -Xswiftc -enable-testing
	@rm -f $(BENCH_PLAN)
	scripts/beside .build/beside.log "$(BESIDE_MAKE) beside-tests DOCS=$(DOCS)" \
	  scripts/timed "tests" $(SWIFT) test -c release -Xswiftc -enable-testing --skip-build --disable-xctest --no-parallel
	@echo "make test: phase times"; sed 's/^/  /' .build/phase-times

# What `make test` runs beside the suites (see above). Alone, it needs the `strata` tool that
# `make test`'s first line builds (the replicate benchmark's test runs it).
beside-tests:
	scripts/timed "benchmark package: build (debug, with tests)" $(SWIFT) build $(BENCH_PACKAGE) --build-tests
	scripts/timed "benchmark package: tests" $(SWIFT) test $(BENCH_PACKAGE) --skip-build --disable-xctest --no-parallel
	$(if $(filter 1,$(DOCS)),scripts/timed "documentation (make docs)" $(BESIDE_MAKE) docs)

# The quick loop while editing one layer: a debug build and one module's suites, e.g.
# `make check SUITES=StrataRecordsTests` (StrataStorageTests, StrataObjectTests,
# StrataPostgresTests; a regular expression over test names, as `swift test --filter` takes).
SUITES ?= StrataRecordsTests
check: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --disable-xctest --filter '$(SUITES)'

# libFuzzer runs of both fuzz targets, FUZZ_SECONDS each (default one hour), one after the
# other, from seed corpora that `strata-harness fuzz` writes; findings land in fuzz-out/. The
# Swift sanitizers go in one -sanitize= flag: swiftc keeps only the last -sanitize= it is given,
# and SwiftPM passes one per --sanitize (alone, --sanitize=fuzzer --sanitize=address builds
# ASan-only Swift code without coverage, and libFuzzer runs blind). ASAN_OPTIONS: LeakSanitizer
# reports the Swift runtime's one-time allocations at exit.
FUZZ_SECONDS ?= 3600
FUZZ_FLAGS = -c release --sanitize=fuzzer --sanitize=address -Xswiftc -sanitize=fuzzer,address --scratch-path .build-fuzz

fuzz: deps
	$(SWIFT) build -c release --product strata-harness
	$(SWIFT) build $(FUZZ_FLAGS) --product strata-fuzz
	$(SWIFT) build $(FUZZ_FLAGS) --product strata-fuzz-records
	mkdir -p fuzz-out/storage fuzz-out/records
	.build/release/strata-harness fuzz --write-corpus fuzz-out/storage --write-records-corpus fuzz-out/records
	cd fuzz-out && SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0 ../.build-fuzz/release/strata-fuzz \
	  -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 -print_final_stats=1 storage
	cd fuzz-out && SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0 ../.build-fuzz/release/strata-fuzz-records \
	  -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 -print_final_stats=1 records
