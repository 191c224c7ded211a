# acorn: a loadable SQLite extension.  `make help` lists the targets.

VERSION   := $(shell cat VERSION)
COMMIT    := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
DATE      := $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
PREFIX    ?= /usr/local
SQLITE3   ?= sqlite3

CC        ?= cc
CFLAGS    ?= -O2 -DNDEBUG
WARN      = -Wall -Wextra
EXTRA_CFLAGS ?=
LDFLAGS   ?=
ALL_CFLAGS = $(CFLAGS) $(WARN) $(EXTRA_CFLAGS) -fPIC -fvisibility=hidden -std=gnu11 -Iext \
  -DACORN_VERSION='"$(VERSION)"' -DACORN_COMMIT='"$(COMMIT)"' \
  -DACORN_BUILD_DATE='"$(DATE)"' -DACORN_CFLAGS='"$(CFLAGS) $(WARN) $(EXTRA_CFLAGS)"'
LDLIBS    = -lpthread -lm
# -z nodelete: the library stays mapped after the last connection that loaded
# it closes, so the uuid7/uuid8 sequences (process-wide words) survive an
# unload and a later load instead of starting again from zero.
SO_LDFLAGS = -shared -Wl,-z,nodelete $(LDFLAGS)

# A folder per feature (ext/cache/, ext/bench/, ext/ids/), what they share
# at ext/: see docs/development.md.  ext/auto.c is the preload library
# dist/acorn-auto.so, not part of acorn.so.
AUTO_SRC  := ext/auto.c
SRC       := $(filter-out $(AUTO_SRC),$(wildcard ext/*.c ext/*/*.c))
HDR       := $(wildcard ext/*.h ext/*/*.h)
STATIC_OBJ:= $(patsubst ext/%.c,build/static/%.o,$(SRC))

SAN_FLAGS  = -O1 -g -UNDEBUG -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
ASAN_LIBS  = $(shell $(CC) -print-file-name=libasan.so) $(shell $(CC) -print-file-name=libubsan.so)

.PHONY: all loadable auto static install uninstall clean deps deps-test deps-bench \
        demo test test-long test-matrix test-asan test-oom memcheck test-bindings test-cluster deps-cluster \
        bench bench-record bench-cache-1m help dist dist-npm dist-python dist-deb test-dist deps-dist \
        dist-gem test-go bench-go \
        fuzz fuzz-corpus fuzz-repro deps-fuzz

all: loadable
loadable: dist/acorn.so

# One line per target; tests/make.bats checks that every target is here.
help:
	@echo "make                 build dist/acorn.so (also: make all, make loadable)"
	@echo "make demo            build and run sql/demo.sql in the sqlite3 shell"
	@echo "make test            build (warnings are errors) and run every tests/*.bats suite"
	@echo "make test-long       the long runs (tests/long/*.bats)"
	@echo "make test-matrix     the suites on SQLite 3.38.2 and 3.52.0, built here from npm's sqlite3 tarballs"
	@echo "make test-asan       the suites with an ASan+UBSan build loaded"
	@echo "make test-oom        every allocation of every feature failed in turn, under ASan+UBSan"
	@echo "make memcheck        the suites with sqlite3 and the C test programs under valgrind"
	@echo "make test-bindings   load from the sqlite3 shell, Python, Node, Go and Tcl"
	@echo "make test-go         go vet and go test of the Go package ext/packages/go (Debian's golang-go and mattn/go-sqlite3)"
	@echo "make bench-go        its go test -bench benchmarks, with ratios (GO_BENCH=regexp, GO_BENCHTIME=1x)"
	@echo "make static          dist/libacorn.a (-DSQLITE_CORE) and its link tests"
	@echo "make auto            dist/acorn-auto.so: LD_PRELOAD it to add acorn to every connection"
	@echo "make test-cluster    a 3-node dqlite cluster on 127.0.0.1 with acorn, and a failover (deps-cluster: go-dqlite)"
	@echo "make bench           run bench/*.sh with progress into build/bench/ (BENCH='uuid insert' for some)"
	@echo "make bench-record    run every benchmark and replace bench/results/ with that run"
	@echo "make bench-cache-1m  the cache benchmark at 10^6 entries (minutes, ~3 GB in TMPDIR)"
	@echo "make install         install lib/acorn.so, lib/acorn-auto.so and include/sqlite-acorn.h (PREFIX=/usr/local, DESTDIR)"
	@echo "make uninstall       remove what make install installed"
	@echo "make clean           remove dist/ and build/"
	@echo "make deps            install the Debian packages to build (deps-test: to test, deps-bench: to benchmark)"
	@echo "make dist            dist/acorn.so, and the npm tarball, Python wheel, Ruby gem and Debian package in dist/ (make dist-npm, dist-python, dist-gem, dist-deb: one)"
	@echo "make test-dist       build them and install, load and remove each one (deps-dist: its Debian packages)"
	@echo "make fuzz            libFuzzer with ASan+UBSan on tests/fuzz/fuzz_acorn.c for FUZZ_SECONDS (60); a crash is"
	@echo "                     saved as build/fuzz/crash-<sha1> and fails it (deps-fuzz: clang; FUZZ_SQLITE=.../sqlite3.c:"
	@echo "                     an instrumented SQLite amalgamation instead of the system library)"
	@echo "make fuzz-corpus     every input kept in tests/fuzz/corpus/ once through the fuzzer's checks (CI runs it, then make fuzz for 120 s)"
	@echo "make fuzz-repro      FILE=build/fuzz/crash-...: run that input again, printing every statement and its result"
	@echo "make help            this list"

# acorn.so, acorn-auto.so, the static library and the C test programs (and
# their ASan and matrix builds) are built again when the flags change (the
# packages and the benchmark programs are not): make test builds with
# assert() on and warnings as errors (-Werror -UNDEBUG), make and make
# bench without.  build/cflags holds them
# and every such target depends on it.  Its rule runs on every make that
# needs it but rewrites the file only when the flags differ, so its date
# says when they last changed; make help or make clean never touch it.  The
# '+' runs the line under make -n too (as make used to when it rewrote the
# file while reading the Makefile): make -n then shows only what the flags
# or the sources really make it rebuild, not every target.
BUILD_FLAGS = $(CC) $(CFLAGS) $(WARN) $(EXTRA_CFLAGS) $(LDFLAGS)
build/cflags: FORCE
	+@mkdir -p $(@D); echo '$(BUILD_FLAGS)' | cmp -s - $@ || echo '$(BUILD_FLAGS)' > $@
FORCE:

dist/acorn.so: $(SRC) $(HDR) VERSION Makefile build/cflags
	@mkdir -p dist
	$(CC) $(ALL_CFLAGS) $(SO_LDFLAGS) -o $@ $(SRC) $(LDLIBS)

build/static/%.o: ext/%.c $(HDR) VERSION Makefile build/cflags
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DSQLITE_CORE -c -o $@ $<

dist/libacorn.a: $(STATIC_OBJ)
	@mkdir -p dist
	rm -f $@
	ar rcs $@ $(STATIC_OBJ)

static: dist/libacorn.a build/static_test build/auto_static
	./build/static_test
	./build/auto_static

# The preload library: a client of libsqlite3 that loads acorn.so from its
# own directory at the first open (see ext/auto.c).
auto: dist/acorn-auto.so dist/acorn.so

dist/acorn-auto.so: $(AUTO_SRC) Makefile build/cflags
	@mkdir -p dist
	$(CC) $(CFLAGS) $(WARN) $(EXTRA_CFLAGS) -fPIC -fvisibility=hidden -std=gnu11 \
	  -shared $(LDFLAGS) -o $@ $(AUTO_SRC) -lsqlite3 -ldl -lpthread

install: dist/acorn.so dist/acorn-auto.so
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include
	install -m 0755 dist/acorn.so $(DESTDIR)$(PREFIX)/lib/acorn.so
	install -m 0755 dist/acorn-auto.so $(DESTDIR)$(PREFIX)/lib/acorn-auto.so
	install -m 0644 ext/sqlite-acorn.h $(DESTDIR)$(PREFIX)/include/sqlite-acorn.h

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/lib/acorn.so $(DESTDIR)$(PREFIX)/lib/acorn-auto.so \
	  $(DESTDIR)$(PREFIX)/include/sqlite-acorn.h

clean:
	rm -rf dist build

# `make demo` and `make test` first install what a fresh Debian lacks.
deps:
	@tests/install-deps build
deps-test:
	@tests/install-deps test
deps-bench:
	@tests/install-deps bench
deps-fuzz:
	@tests/install-deps fuzz

demo: deps
	$(MAKE) --no-print-directory dist/acorn.so
	$(SQLITE3) -batch :memory: < sql/demo.sql

# ------------------------------------------------------- C test programs
# The C programs the bats suites run (threads, fork, crashes, test hooks),
# one line each:
#   $(eval $(call test_prog,NAME,SOURCES,FLAGS,LIBS,DEPS))
# compiles tests/c/NAME.c with SOURCES into build/NAME, against the system's
# SQLite, and into build/matrix/<version>/NAME against that version's
# (make test-matrix).  The word libacorn.a in SOURCES stands for the static
# library built for the same SQLite.  FLAGS go to the compiler (-DSQLITE_CORE
# -Iext to build acorn's sources in), LIBS to the link after -lsqlite3, and
# DEPS are files the program includes besides ext/*.h.  Each depends on
# build/cflags, so a change of flags builds it again; tests/run-matrix
# checks that the matrix has every one (TEST_PROGS).
define test_prog
build/$1: tests/c/$1.c $(patsubst libacorn.a,dist/libacorn.a,$2) $5 $$(HDR) Makefile build/cflags
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS) $$(WARN) $$(EXTRA_CFLAGS) $$(LDFLAGS) -std=gnu11 $3 -o $$@ $$< \
	  $(patsubst libacorn.a,dist/libacorn.a,$2) -lsqlite3 $4 $$(LDLIBS)

build/matrix/%/$1: tests/c/$1.c $(patsubst libacorn.a,build/matrix/%/libacorn.a,$2) $5 $$(HDR) \
                   Makefile build/cflags build/sqlite/%/libsqlite3.so.0
	@mkdir -p $$(@D)
	$$(CC) $$(CFLAGS) $$(WARN) $$(EXTRA_CFLAGS) $$(MATRIX_INC) $$(LDFLAGS) -std=gnu11 $3 -o $$@ $$< \
	  $(patsubst libacorn.a,build/matrix/$$*/libacorn.a,$2) $$(MATRIX_LINK) $4 $$(LDLIBS)

TEST_PROGS += $1
endef
TEST_PROGS :=

# uuid: ids from several processes and threads; the clock hook (ACORN_TESTING)
$(eval $(call test_prog,uuid_proc))
$(eval $(call test_prog,uuid_clock,$(SRC),-DSQLITE_CORE -DACORN_TESTING -Iext))
# bench_insert's latency histogram: the test includes ext/bench/bench_run.c itself
$(eval $(call test_prog,bench_hist,$(filter-out ext/bench/bench_run.c,$(SRC)),-DSQLITE_CORE -Iext,,ext/bench/bench_run.c))
# a program that knows nothing of acorn, run with dist/acorn-auto.so
# preloaded; -rdynamic exports its sqlite3_auto_extension, which counts calls
$(eval $(call test_prog,auto_test,,-rdynamic,-ldl))
# the random source's known answers: ext/random.c with its test hooks
$(eval $(call test_prog,chacha_kat,ext/random.c,-DSQLITE_CORE -DACORN_TESTING -Iext))
# SHA-1's known answers (version 5 UUIDs): ext/ids/sha1.c alone
$(eval $(call test_prog,sha1_kat,ext/ids/sha1.c,-DSQLITE_CORE -Iext))
# cache: a writer killed at random moments and the check of its log
# (tests/cache_crash.bats), and several processes on one file
$(eval $(call test_prog,cache_crash,,,,tests/c/splitmix.h))
$(eval $(call test_prog,cache_load,,,,tests/c/splitmix.h))
$(eval $(call test_prog,cache_wait))
$(eval $(call test_prog,cache_pieces_crash,,,,tests/c/splitmix.h))
# the cache's recency buffer driven from C, with assert() on in every
# build: ext/cache/cache_uses.c alone
$(eval $(call test_prog,cache_uses,ext/cache/cache_uses.c,-DSQLITE_CORE -UNDEBUG -Iext))
# allocation failures: acorn built in (-DSQLITE_CORE) so that its
# allocations go through the failing allocator; plain for the sample in
# `make test`, with ASan+UBSan (build/acorn_oom_asan) for `make test-oom`
$(eval $(call test_prog,acorn_oom,$(SRC),-DSQLITE_CORE -Iext))
# the static library, and the documented alternative to the preload
# library: sqlite3_auto_extension with the static library
$(eval $(call test_prog,static_test,libacorn.a,-Iext))
$(eval $(call test_prog,auto_static,libacorn.a))

TEST_BINS = $(addprefix build/,$(TEST_PROGS))

build/acorn_oom_asan: tests/c/acorn_oom.c $(SRC) $(HDR)
	@mkdir -p build
	$(CC) $(SAN_FLAGS) $(WARN) $(LDFLAGS) -std=gnu11 -DSQLITE_CORE -Iext -o $@ $< $(SRC) -lsqlite3 $(LDLIBS)

# `make test`: a build with warnings as errors and assert() on (as many
# compilers at once as there are processors: serially it took 20 of make
# test's 83 s on 2 cores), the static library's link tests, then every
# suite, as many at once as there are processors (tests/run-split: each
# suite whole, its tests in order).  The build depends on build/cflags, so a
# second make test compiles nothing and one after a plain make rebuilds what
# that built with other flags.
NPROC := $(shell nproc 2>/dev/null || echo 1)
TEST_CFLAGS = -Werror -UNDEBUG
test: deps-test
	$(MAKE) --no-print-directory -j$(NPROC) dist/acorn.so dist/acorn-auto.so $(TEST_BINS) static \
	  EXTRA_CFLAGS="$(TEST_CFLAGS)"
	@echo "make test: $(SQLITE3) is SQLite $$($(SQLITE3) --version | cut -d' ' -f1)"
	tests/run-split tests/*.bats

# `make test-long`: the runs too long for `make test` (CI runs both).
test-long: deps-test
	$(MAKE) --no-print-directory dist/acorn.so dist/acorn-auto.so $(TEST_BINS)
	@echo "make test-long: $(SQLITE3) is SQLite $$($(SQLITE3) --version | cut -d' ' -f1)"
	tests/run-bats tests/long/*.bats

dist/asan/acorn.so: $(SRC) $(HDR) VERSION Makefile build/cflags
	@mkdir -p dist/asan
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) $(SO_LDFLAGS) -o $@ $(SRC) $(LDLIBS)

# The preload library's suite loads the acorn.so next to it: here the
# sanitized one, through a sanitized dist/asan/acorn-auto.so.
dist/asan/acorn-auto.so: $(AUTO_SRC) Makefile build/cflags
	@mkdir -p dist/asan
	$(CC) $(CFLAGS) $(WARN) $(SAN_FLAGS) -fPIC -fvisibility=hidden -std=gnu11 \
	  -shared $(LDFLAGS) -o $@ $(AUTO_SRC) -lsqlite3 -ldl -lpthread

test-asan: dist/asan/acorn.so dist/asan/acorn-auto.so dist/acorn.so dist/acorn-auto.so $(TEST_BINS)
	ACORN=$(CURDIR)/dist/asan/acorn ACORN_PRELOAD="$(ASAN_LIBS)" \
	  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  tests/run-bats tests/*.bats

# `make test-oom`: every allocation of every feature's workload failed in
# turn (once: only that one; persist: that one and all after it, every 5th),
# each in a scratch directory of its own on tmpfs when there is one
# (bench_insert fsyncs).  The two sweeps run at once (each is one thread),
# their outputs printed one after the other; either failing fails it.
test-oom: build/acorn_oom_asan
	@t=$$( [ -d /dev/shm ] && echo /dev/shm || echo $${TMPDIR:-/tmp} ); \
	  d=$$(mktemp -d $$t/acorn-oom.XXXXXX) || exit 1; mkdir $$d/once $$d/persist; \
	  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1; \
	  ./build/acorn_oom_asan $$d/once -mode once >$$d/once.out 2>&1 & p1=$$!; \
	  ./build/acorn_oom_asan $$d/persist -mode persist -stride 5 >$$d/persist.out 2>&1 & p2=$$!; \
	  rc1=0; wait $$p1 || rc1=$$?; rc2=0; wait $$p2 || rc2=$$?; \
	  cat $$d/once.out $$d/persist.out; rm -rf $$d; \
	  [ $$rc1 -eq 0 ] || echo "make test-oom: the once sweep failed (exit $$rc1)"; \
	  [ $$rc2 -eq 0 ] || echo "make test-oom: the persist sweep failed (exit $$rc2)"; \
	  [ $$rc1 -eq 0 ] && [ $$rc2 -eq 0 ]

# `make test-matrix`: every suite against SQLite versions other than the
# system's.  Each is built here from the autoconf tarball that a release of
# the npm package sqlite3 carries (npm pack fetches it and runs nothing),
# once: build/sqlite/<version>/ holds its sources, libsqlite3.so.0 and a
# sqlite3 shell linked to that library.  The options are those SQLite's own
# ./configure gives a user: thread-safe, extension loading on, math
# functions, FTS4, FTS5, R-Tree and Geopoly, plus what the shell adds
# (explain comments, dbstat, dbpage and stmt tables).  acorn and the C test
# programs (and acorn-auto.so, which loads the acorn.so beside it) are
# compiled against each version's headers into build/matrix/<version>/;
# tests/run-matrix runs the suites with them and, for the versions in
# MATRIX_SYSTEM (by default 3.38.2, older than the system's: a build on newer
# headers loaded into an older library is how 3.38 crashed), again with
# dist/acorn.so (the system's headers) loaded into that library.
MATRIX_SQLITE = 3.38.2 3.52.0
MATRIX_SYSTEM ?= 3.38.2
NPM_SQLITE3_3.38.2 = 5.0.3
NPM_SQLITE3_3.52.0 = 6.0.1
SQLITE_CFLAGS = -O2
SQLITE_OPTS = -DSQLITE_THREADSAFE=1 -D_REENTRANT=1 -DSQLITE_ENABLE_MATH_FUNCTIONS \
  -DSQLITE_ENABLE_FTS4 -DSQLITE_ENABLE_FTS5 -DSQLITE_ENABLE_RTREE -DSQLITE_ENABLE_GEOPOLY \
  -DSQLITE_ENABLE_EXPLAIN_COMMENTS -DSQLITE_ENABLE_DBPAGE_VTAB -DSQLITE_ENABLE_STMTVTAB \
  -DSQLITE_ENABLE_DBSTAT_VTAB
# the suites of make test; MATRIX_SUITES='tests/*.bats tests/long/*.bats'
# adds the long runs (four times their time)
MATRIX_SUITES ?= tests/*.bats
# in a recipe whose stem $* is the version: its headers and its library
MATRIX_INC  = -Ibuild/sqlite/$*
MATRIX_LINK = -Lbuild/sqlite/$* -Wl,-rpath,$(CURDIR)/build/sqlite/$* -lsqlite3
MATRIX_BINS = $(foreach v,$(MATRIX_SQLITE),build/sqlite/$v/sqlite3 \
  $(addprefix build/matrix/$v/,acorn.so acorn-auto.so $(TEST_PROGS)))

# kept: make would delete them as intermediate files of the chain
.PRECIOUS: build/sqlite/%/sqlite3.c build/sqlite/%/libsqlite3.so.0 build/matrix/%/libacorn.a

build/sqlite/%/sqlite3.c:
	@test -n "$(NPM_SQLITE3_$*)" || { echo "no npm package known for SQLite $*"; exit 1; }
	@command -v npm >/dev/null || { echo "the SQLite matrix needs npm (tests/install-deps bindings)"; exit 1; }
	rm -rf build/sqlite/$*/npm
	mkdir -p build/sqlite/$*/npm
	cd build/sqlite/$*/npm && npm pack --silent sqlite3@$(NPM_SQLITE3_$*) >/dev/null
	tar -xzf build/sqlite/$*/npm/sqlite3-$(NPM_SQLITE3_$*).tgz -C build/sqlite/$*/npm \
	  --wildcards 'package/deps/sqlite-autoconf-*.tar.gz'
	tar -xzf build/sqlite/$*/npm/package/deps/sqlite-autoconf-*.tar.gz -C build/sqlite/$* --no-same-owner \
	  --strip-components=1 --wildcards $(addprefix '*/,$(addsuffix ',sqlite3.c sqlite3.h sqlite3ext.h shell.c))
	grep -q '^#define SQLITE_VERSION  *"$*"' build/sqlite/$*/sqlite3.h \
	  || { echo "sqlite3@$(NPM_SQLITE3_$*) does not carry SQLite $*"; exit 1; }
	rm -rf build/sqlite/$*/npm
	touch $@

build/sqlite/%/libsqlite3.so.0: build/sqlite/%/sqlite3.c
	$(CC) $(SQLITE_CFLAGS) $(SQLITE_OPTS) -fPIC -shared -Wl,-soname,libsqlite3.so.0 \
	  -o $@ $< -lpthread -ldl -lm
	ln -sf libsqlite3.so.0 build/sqlite/$*/libsqlite3.so

build/sqlite/%/sqlite3: build/sqlite/%/libsqlite3.so.0
	$(CC) $(SQLITE_CFLAGS) $(SQLITE_OPTS) $(MATRIX_INC) -o $@ build/sqlite/$*/shell.c \
	  $(MATRIX_LINK) -lpthread -ldl -lm

build/matrix/%/acorn.so: $(SRC) $(HDR) VERSION Makefile build/cflags build/sqlite/%/libsqlite3.so.0
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(MATRIX_INC) $(SO_LDFLAGS) -o $@ $(SRC) $(LDLIBS)

build/matrix/%/libacorn.a: $(SRC) $(HDR) VERSION Makefile build/cflags build/sqlite/%/libsqlite3.so.0
	rm -rf $(@D)/static $@
	mkdir -p $(@D)/static
	for f in $(SRC); do \
	  $(CC) $(ALL_CFLAGS) $(MATRIX_INC) -DSQLITE_CORE -c -o $(@D)/static/$$(basename $$f .c).o $$f \
	    || exit 1; \
	done
	ar rcs $@ $(@D)/static/*.o

build/matrix/%/acorn-auto.so: $(AUTO_SRC) Makefile build/cflags build/sqlite/%/libsqlite3.so.0
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN) $(EXTRA_CFLAGS) $(MATRIX_INC) -fPIC -fvisibility=hidden -std=gnu11 \
	  -shared $(LDFLAGS) -o $@ $(AUTO_SRC) $(MATRIX_LINK) -ldl -lpthread

test-matrix: deps-test
	$(MAKE) --no-print-directory dist/acorn.so dist/acorn-auto.so $(TEST_BINS) $(MATRIX_BINS) \
	  EXTRA_CFLAGS="$(TEST_CFLAGS)"
	MATRIX_SYSTEM="$(MATRIX_SYSTEM)" MATRIX_PROGS="$(TEST_PROGS)" tests/run-matrix $(MATRIX_SQLITE) -- $(MATRIX_SUITES)

# `make memcheck`: the suites under valgrind, but for the runs that only
# repeat under it what ASan already watches, at many times its cost: the
# crash and load tests (processes killed or racing; make test-asan runs
# them), the allocation-failure sweeps (make test-oom), the docs' examples.
MEMCHECK_SUITES = $(filter-out tests/cache_crash.bats tests/cache_load.bats tests/oom.bats \
                    tests/docs.bats,$(wildcard tests/*.bats))
# The suites run in as many groups at once as there are processors
# (tests/run-split): valgrind keeps one busy per program.
memcheck: dist/acorn.so dist/acorn-auto.so $(TEST_BINS)
	ACORN_VALGRIND=1 ACORN_SCALE=20 tests/run-split $(MEMCHECK_SUITES)

test-bindings: dist/acorn.so
	tests/bindings/run

# The Go package, built in GOPATH mode from Debian's golang-go and
# golang-github-mattn-go-sqlite3-dev, nothing downloaded: build/go/gopath has
# a link sqlite-acorn/acorn to ext/packages/go (tests/go/run sets it up).
# ACORN_EXTENSION points it at the acorn.so just built.
GO_BENCH     ?= .
GO_BENCHTIME ?= 1s
test-go: dist/acorn.so
	tests/go/run test

bench-go: dist/acorn.so
	tests/go/run bench '$(GO_BENCH)' '$(GO_BENCHTIME)'

# `make test-cluster`: three dqlite-demo nodes (Debian's go-dqlite) on
# 127.0.0.1 with acorn preloaded, the leader killed (tests/cluster/).
deps-cluster:
	@tests/install-deps cluster

test-cluster: deps-cluster
	$(MAKE) --no-print-directory dist/acorn.so dist/acorn-auto.so
	tests/cluster/run

# `make bench`: every bench/*.sh (or BENCH='uuid insert'), tools checked
# first, progress shown, output in build/bench/ (untracked).  Only
# `make bench-record` replaces bench/results/, all files from one run.
bench: deps-bench
	bench/run $(BENCH)

bench-record: deps-bench
	bench/run --record

# The cache benchmark at 10^6 entries (minutes, ~3 GB in $$TMPDIR).
bench-cache-1m: deps-bench
	CACHE_SIZES=1000000 CACHE_DISKCACHE_KEYS=0 bash bench/cache.sh

# bench_insert's yardstick: one run of the same workload in plain C
# (bench/insert.sh builds and runs it).
build/ref_insert: bench/ref_insert.c bench/bench_util.h
	@mkdir -p build
	$(CC) $(CFLAGS) $(WARN) -Werror $(LDFLAGS) -o $@ $< -lsqlite3 $(LDLIBS)

# cache: the benchmark program behind bench/cache.sh.
build/cache_bench: bench/cache_bench.c bench/bench_util.h
	@mkdir -p build
	$(CC) $(CFLAGS) $(WARN) -Werror $(LDFLAGS) -o $@ $< -lsqlite3 $(LDLIBS)

# cache: the read-through benchmark behind bench/readthrough.sh.
build/readthrough: bench/readthrough.c bench/bench_util.h
	@mkdir -p build
	$(CC) $(CFLAGS) $(WARN) -Werror $(LDFLAGS) -o $@ $< -lsqlite3 $(LDLIBS)

# cache: torrent pieces written and read block by block, behind
# bench/pieces.sh.
build/pieces: bench/pieces.c bench/bench_util.h
	@mkdir -p build
	$(CC) $(CFLAGS) $(WARN) -Werror $(LDFLAGS) -o $@ $< -lsqlite3 $(LDLIBS)

# cache: the driver behind bench/cache_ir.sh (one kind of operation in one
# function, for callgrind).
build/cache_ir: bench/cache_ir.c bench/bench_util.h
	@mkdir -p build
	$(CC) $(CFLAGS) $(WARN) -Werror $(LDFLAGS) -o $@ $< -lsqlite3 $(LDLIBS)

# cache: the same operations on a FIFO written by hand (bench/cache_ir.sh)
build/hand_ir: bench/hand_ir.c bench/bench_util.h
	@mkdir -p build
	$(CC) $(CFLAGS) $(WARN) -Werror $(LDFLAGS) -o $@ $< -lsqlite3 $(LDLIBS)

# cache: the driver behind bench/get_ir.sh (gets of one form in one function,
# for callgrind, against a plain table in the same file).
build/get_ir: bench/get_ir.c bench/bench_util.h
	@mkdir -p build
	$(CC) $(CFLAGS) $(WARN) -Werror $(LDFLAGS) -o $@ $< -lsqlite3 $(LDLIBS)

# ---------------------------------------------------------------- packages
# `make dist`: the one binary, built with Debian's hardening flags and
# stripped, packaged three ways from the VERSION file and the templates in
# ext/packages/:
#   dist/sqlite-acorn-$(VERSION).tgz                npm (npm pack)
#   dist/sqlite_acorn-$(VERSION)-py3-none-TAG.whl   Python (wheel pack);
#        TAG is manylinux_2_N_x86_64 with 2.N the newest glibc symbol
#        version the binary needs
#   dist/sqlite_acorn-$(VERSION)-x86_64-linux.gem   Ruby (gem build), with
#        ActiveSupport::Cache::AcornStore
#   dist/acorn_$(VERSION)_amd64.deb                 Debian (dpkg-deb); it
#        also holds the preload library, built and stripped the same way,
#        and the public header
# `make test-dist` builds them and tests each one installed (tests/dist/run).
PKG        = build/pkg
PKG_SO     = $(PKG)/acorn.so
PKG_AUTO   = $(PKG)/acorn-auto.so
PKG_CFLAGS = -O2 -fstack-protector-strong -fstack-clash-protection -fcf-protection \
             -D_FORTIFY_SOURCE=2
PKG_LDFLAGS= -Wl,-z,relro -Wl,-z,now
PKG_STRIP  = strip --strip-unneeded --remove-section=.comment --remove-section=.note
PKG_NODE_ARCH = linux-x64
DEB_ARCH   = amd64
DEB_LIBDIR = usr/lib/x86_64-linux-gnu
DEB_PYTHON ?= /usr/bin/python3
GEM       ?= gem
NPM       ?= npm
# Every date inside the packages (file times, the changelog, acorn_debug()'s
# date) is the commit's, so building one commit twice gives the same files.
PKG_EPOCH := $(or $(SOURCE_DATE_EPOCH),$(shell git log -1 --format=%ct 2>/dev/null),$(shell date +%s))
PKG_DATE  := $(shell date -u -d @$(PKG_EPOCH) +%Y-%m-%dT%H:%M:%SZ)
# $(call pkg_glibc,FILES): the newest GLIBC_x.y symbol version FILES need
# (after they are built).
pkg_glibc  = $$(objdump -T $(1) | sed -n 's/.*GLIBC_\([0-9][0-9.]*\).*/\1/p' | sort -uV | tail -n 1)

$(PKG_SO): $(SRC) $(HDR) VERSION Makefile
	@mkdir -p $(PKG)
	$(CC) $(PKG_CFLAGS) $(WARN) $(EXTRA_CFLAGS) -fPIC -fvisibility=hidden -std=gnu11 -Iext \
	  -DACORN_VERSION='"$(VERSION)"' -DACORN_COMMIT='"$(COMMIT)"' \
	  -DACORN_BUILD_DATE='"$(PKG_DATE)"' -DACORN_CFLAGS='"$(PKG_CFLAGS) $(WARN) $(EXTRA_CFLAGS)"' \
	  $(SO_LDFLAGS) $(PKG_LDFLAGS) -Wl,-soname,acorn.so -o $(PKG)/acorn.unstripped.so $(SRC) $(LDLIBS)
	$(PKG_STRIP) -o $@ $(PKG)/acorn.unstripped.so

# The preload library for the Debian package (ext/auto.c, as dist/acorn-auto.so).
$(PKG_AUTO): $(AUTO_SRC) Makefile
	@mkdir -p $(PKG)
	$(CC) $(PKG_CFLAGS) $(WARN) $(EXTRA_CFLAGS) -fPIC -fvisibility=hidden -std=gnu11 \
	  -shared $(LDFLAGS) $(PKG_LDFLAGS) -Wl,-soname,acorn-auto.so \
	  -o $(PKG)/acorn-auto.unstripped.so $(AUTO_SRC) -lsqlite3 -ldl -lpthread
	$(PKG_STRIP) -o $@ $(PKG)/acorn-auto.unstripped.so

dist: dist/acorn.so dist-npm dist-python dist-deb dist-gem

dist-npm: $(PKG_SO)
	rm -rf $(PKG)/npm dist/sqlite-acorn-*.tgz
	@mkdir -p dist
	mkdir -p $(PKG)/npm/lib/$(PKG_NODE_ARCH)
	sed 's/@VERSION@/$(VERSION)/g' ext/packages/npm/package.json > $(PKG)/npm/package.json
	sed 's/@VERSION@/$(VERSION)/g' ext/packages/npm/README.md > $(PKG)/npm/README.md
	cp ext/packages/npm/index.js ext/packages/npm/load.js ext/packages/npm/cache.js \
	   ext/packages/npm/keyv.js ext/packages/npm/index.d.ts ext/packages/npm/keyv.d.ts $(PKG)/npm/
	if [ -f LICENSE ]; then cp LICENSE $(PKG)/npm/LICENSE; fi
	install -m 0755 $(PKG_SO) $(PKG)/npm/lib/$(PKG_NODE_ARCH)/acorn.so
	touch -d @$(PKG_EPOCH) $$(find $(PKG)/npm)
	cd $(PKG)/npm && $(NPM) pack --silent --pack-destination $(CURDIR)/dist >/dev/null
	@ls -l dist/sqlite-acorn-$(VERSION).tgz


dist-python: $(PKG_SO)
	rm -rf $(PKG)/wheel dist/sqlite_acorn-*.whl
	@mkdir -p dist
	mkdir -p $(PKG)/wheel/sqlite_acorn $(PKG)/wheel/sqlite_acorn-$(VERSION).dist-info
	sed 's/@VERSION@/$(VERSION)/g' ext/packages/python/sqlite_acorn/__init__.py \
	  > $(PKG)/wheel/sqlite_acorn/__init__.py
	cp ext/packages/python/sqlite_acorn/_cache.py ext/packages/python/sqlite_acorn/django.py \
	  $(PKG)/wheel/sqlite_acorn/
	install -m 0755 $(PKG_SO) $(PKG)/wheel/sqlite_acorn/acorn.so
	{ sed 's/@VERSION@/$(VERSION)/g' ext/packages/python/METADATA; echo; \
	  sed 's/@VERSION@/$(VERSION)/g' ext/packages/python/README.md; } > $(PKG)/wheel/sqlite_acorn-$(VERSION).dist-info/METADATA
	sed "s/@PLATFORM@/manylinux_$$(echo $(call pkg_glibc,$(PKG_SO)) | tr . _)_x86_64/" \
	  ext/packages/python/WHEEL > $(PKG)/wheel/sqlite_acorn-$(VERSION).dist-info/WHEEL
	if [ -f LICENSE ]; then cp LICENSE $(PKG)/wheel/sqlite_acorn-$(VERSION).dist-info/LICENSE; fi
	SOURCE_DATE_EPOCH=$(PKG_EPOCH) $(DEB_PYTHON) -m wheel pack --dest-dir dist $(PKG)/wheel >/dev/null
	@ls -l dist/sqlite_acorn-$(VERSION)-*.whl

# Ruby: lib/sqlite_acorn.rb (SqliteAcorn.load), lib/sqlite_acorn/acorn.so and
# lib/active_support/cache/acorn_store.rb, where ActiveSupport's
# lookup_store(:acorn_store, ...) requires it; a platform gem (x86_64-linux).
# gem build takes its dates from SOURCE_DATE_EPOCH.
dist-gem: $(PKG_SO)
	rm -rf $(PKG)/gem dist/sqlite_acorn-*.gem
	@mkdir -p dist
	mkdir -p $(PKG)/gem/lib/sqlite_acorn $(PKG)/gem/lib/active_support/cache
	for f in sqlite_acorn.gemspec README.md lib/sqlite_acorn.rb; do \
	  sed 's/@VERSION@/$(VERSION)/g' ext/packages/ruby/$$f > $(PKG)/gem/$$f || exit 1; \
	done
	cp ext/packages/ruby/lib/active_support/cache/acorn_store.rb $(PKG)/gem/lib/active_support/cache/
	if [ -f LICENSE ]; then cp LICENSE $(PKG)/gem/LICENSE; fi
	install -m 0755 $(PKG_SO) $(PKG)/gem/lib/sqlite_acorn/acorn.so
	touch -d @$(PKG_EPOCH) $$(find $(PKG)/gem)
	cd $(PKG)/gem && SOURCE_DATE_EPOCH=$(PKG_EPOCH) $(GEM) build --silent sqlite_acorn.gemspec \
	  --output $(CURDIR)/dist/sqlite_acorn-$(VERSION)-x86_64-linux.gem
	@ls -l dist/sqlite_acorn-$(VERSION)-x86_64-linux.gem

# Debian: the extension and the preload library in the multiarch library
# directory, where Debian's libsqlite3-mod-* packages put their extensions,
# so that `.load acorn` and `load_extension('acorn')` find it by name and
# acorn-auto.so finds acorn.so beside it; the public header in usr/include;
# README.Debian says where each file is.  The changelog's first entry must
# be VERSION's (its date is the commit's).  The copyright file takes its
# license text from LICENSE when there is one.
dist-deb: $(PKG_SO) $(PKG_AUTO)
	rm -rf $(PKG)/deb dist/acorn_*_$(DEB_ARCH).deb
	@mkdir -p dist
	@top=$$(sed -n '1s/^acorn (\([^)]*\)).*/\1/p' ext/packages/debian/changelog); \
	if [ "$$top" != "$(VERSION)" ]; then \
	  echo "ext/packages/debian/changelog: the first entry is for '$$top', VERSION is $(VERSION): add an entry for $(VERSION)" >&2; \
	  exit 1; \
	fi
	@set -e; r=$(PKG)/deb; doc=$$r/usr/share/doc/acorn; \
	mkdir -p $$r/DEBIAN $$r/$(DEB_LIBDIR) $$r/usr/include $$doc; \
	install -m 0644 $(PKG_SO) $$r/$(DEB_LIBDIR)/acorn.so; \
	install -m 0644 $(PKG_AUTO) $$r/$(DEB_LIBDIR)/acorn-auto.so; \
	install -m 0644 ext/sqlite-acorn.h $$r/usr/include/sqlite-acorn.h; \
	sed 's|@LIBDIR@|/$(DEB_LIBDIR)|g' ext/packages/debian/README.Debian > $$doc/README.Debian; \
	sed -e "s/@DATE@/$$(LC_ALL=C date -u -R -d @$(PKG_EPOCH))/" \
	    ext/packages/debian/changelog | gzip -9n > $$doc/changelog.gz; \
	year=$$(date -u -d @$(PKG_EPOCH) +%Y); \
	if [ -f LICENSE ]; then \
	  holder=$$(sed -n 's/^Copyright *\((c)\|(C)\|©\)\? *//p' LICENSE | head -n 1); \
	  { sed -e "s/@COPYRIGHT@/$${holder:-$$year acorn developers}/" -e '/^License: Expat$$/q' \
	      ext/packages/debian/copyright; \
	    sed -e 's/[[:space:]]*$$//' -e 's/^$$/./' -e 's/^/ /' LICENSE; } > $$doc/copyright; \
	else \
	  sed "s/@COPYRIGHT@/$$year acorn developers/" ext/packages/debian/copyright > $$doc/copyright; \
	fi; \
	printf 'activate-noawait ldconfig\n' > $$r/DEBIAN/triggers; \
	glibc=$(call pkg_glibc,$(PKG_SO) $(PKG_AUTO)); size=$$(du -k -s --apparent-size $$r/usr | cut -f1); \
	sed -e 's/@VERSION@/$(VERSION)/' -e 's/@ARCH@/$(DEB_ARCH)/' -e 's|@LIBDIR@|/$(DEB_LIBDIR)|g' \
	    -e "s/@GLIBC@/$$glibc/" -e "s/@SIZE@/$$size/" \
	    ext/packages/debian/control > $$r/DEBIAN/control; \
	(cd $$r && find usr -type f | LC_ALL=C sort | xargs md5sum) > $$r/DEBIAN/md5sums; \
	find $$r -type d -exec chmod 0755 {} +; \
	find $$r -type f -exec chmod 0644 {} +; \
	touch -h -d @$(PKG_EPOCH) $$(find $$r); \
	SOURCE_DATE_EPOCH=$(PKG_EPOCH) dpkg-deb --root-owner-group -Zxz --build $$r \
	  dist/acorn_$(VERSION)_$(DEB_ARCH).deb >/dev/null
	@ls -l dist/acorn_$(VERSION)_$(DEB_ARCH).deb

test-dist: deps-dist
	$(MAKE) --no-print-directory dist
	tests/dist/run

deps-dist:
	@tests/install-deps dist

# ---------------------------------------------------------------- fuzzing
# `make fuzz`: libFuzzer on tests/fuzz/fuzz_acorn.c, built with clang from
# acorn's sources (-DSQLITE_CORE, plus -DACORN_TESTING for the clock hook)
# and linked against the system libsqlite3.  New inputs go to
# build/fuzz/corpus; tests/fuzz/corpus (the hand-written starting inputs)
# is only read.  Any crash, sanitizer report, leak or broken invariant
# stops the run, saves the input as build/fuzz/crash-* and fails.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_FLAGS    = -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined \
                -fno-sanitize-recover=all
FUZZ_ARGS    ?=
# FUZZ_SQLITE=path/to/sqlite3.c: link that amalgamation, built with the same
# sanitizers and coverage, instead of the system library.  ASan then also
# sees SQLite's own reads of memory that acorn made it free (the system
# library is not instrumented), and the fuzzer is guided by SQLite's
# branches too.  make test-matrix leaves two amalgamations in build/sqlite/:
# FUZZ_SQLITE=build/sqlite/3.52.0/sqlite3.c, for one.
FUZZ_SQLITE  ?=
ifeq ($(FUZZ_SQLITE),)
FUZZ_BIN      = build/fuzz/fuzz_acorn
FUZZ_LIB      = -lsqlite3
FUZZ_DEP      =
FUZZ_INC      =
else
FUZZ_BIN      = build/fuzz/fuzz_acorn_amalg
FUZZ_LIB      = build/fuzz/sqlite3.o
FUZZ_DEP      = build/fuzz/sqlite3.o
FUZZ_INC      = -I$(dir $(FUZZ_SQLITE))
endif

build/fuzz/sqlite3.o: $(FUZZ_SQLITE) Makefile
	@mkdir -p build/fuzz
	$(FUZZ_CC) -c -g -O1 -fno-omit-frame-pointer \
	  -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all \
	  -DSQLITE_ENABLE_API_ARMOR -o $@ $(FUZZ_SQLITE)

$(FUZZ_BIN): tests/fuzz/fuzz_acorn.c $(SRC) $(HDR) $(FUZZ_DEP) VERSION Makefile
	@mkdir -p build/fuzz
	$(FUZZ_CC) $(FUZZ_FLAGS) $(WARN) -Werror -std=gnu11 -DSQLITE_CORE -DACORN_TESTING \
	  -DACORN_VERSION='"$(VERSION)"' -DACORN_COMMIT='"$(COMMIT)"' $(FUZZ_INC) -Iext \
	  -o $@ tests/fuzz/fuzz_acorn.c $(SRC) $(FUZZ_LIB) $(LDLIBS)

fuzz: deps-fuzz
	$(MAKE) --no-print-directory $(FUZZ_BIN)
	@mkdir -p build/fuzz/corpus
	$(FUZZ_BIN) -max_total_time=$(FUZZ_SECONDS) -timeout=20 \
	  -max_len=2048 -dict=tests/fuzz/acorn.dict -artifact_prefix=build/fuzz/ \
	  -print_final_stats=1 $(FUZZ_ARGS) build/fuzz/corpus tests/fuzz/corpus

# `make fuzz-corpus`: every kept input once, with every check, no mutation:
# the regression run CI gates on (each fixed crash leaves its input there).
fuzz-corpus: deps-fuzz
	$(MAKE) --no-print-directory $(FUZZ_BIN)
	$(FUZZ_BIN) -runs=0 -timeout=20 -max_len=2048 -artifact_prefix=build/fuzz/ \
	  -print_final_stats=1 tests/fuzz/corpus

fuzz-repro: $(FUZZ_BIN)
	@test -n "$(FILE)" || { echo "usage: make fuzz-repro FILE=build/fuzz/crash-..."; exit 2; }
	ACORN_FUZZ_TRACE=1 $(FUZZ_BIN) $(FILE)
