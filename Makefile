# acorn: a loadable SQLite extension.  `make help` lists the targets.

VERSION   := $(shell cat VERSION)
COMMIT    := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
DATE      := $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
PREFIX    ?= /usr/local
SQLITE3   ?= sqlite3

CC        ?= cc
CFLAGS    ?= -O2
WARN      = -Wall -Wextra
EXTRA_CFLAGS ?=
LDFLAGS   ?=
ALL_CFLAGS = $(CFLAGS) $(WARN) $(EXTRA_CFLAGS) -fPIC -fvisibility=hidden -std=gnu11 \
  -DACORN_VERSION='"$(VERSION)"' -DACORN_COMMIT='"$(COMMIT)"' \
  -DACORN_BUILD_DATE='"$(DATE)"' -DACORN_CFLAGS='"$(CFLAGS) $(WARN) $(EXTRA_CFLAGS)"'
LDLIBS    = -lpthread -lm
# -z nodelete: the library stays mapped after the last connection that loaded
# it closes, so the uuid7/uuid8 sequences (process-wide words) survive an
# unload and a later load instead of starting again from zero.
SO_LDFLAGS = -shared -Wl,-z,nodelete $(LDFLAGS)

SRC       := $(wildcard ext/*.c)
HDR       := $(wildcard ext/*.h)
STATIC_OBJ:= $(patsubst ext/%.c,build/static/%.o,$(SRC))

SAN_FLAGS  = -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
ASAN_LIBS  = $(shell $(CC) -print-file-name=libasan.so) $(shell $(CC) -print-file-name=libubsan.so)

.PHONY: all loadable static install uninstall clean deps deps-test deps-bench \
        demo test test-long test-asan memcheck test-bindings bench bench-record help

all: loadable
loadable: dist/acorn.so

# One line per target; tests/make.bats checks that every target is here.
help:
	@echo "make                 build dist/acorn.so (also: make all, make loadable)"
	@echo "make demo            build and run sql/demo.sql in the sqlite3 shell"
	@echo "make test            build (warnings are errors) and run every tests/*.bats suite"
	@echo "make test-long       the long runs (tests/long/*.bats)"
	@echo "make test-asan       the suites with an ASan+UBSan build loaded"
	@echo "make memcheck        the suites with sqlite3 and the C test programs under valgrind"
	@echo "make test-bindings   load from the sqlite3 shell, Python, Node, Go and Tcl"
	@echo "make static          dist/libacorn.a (-DSQLITE_CORE) and its link test"
	@echo "make bench           run bench/*.sh with progress into build/bench/ (BENCH='uuid insert' for some)"
	@echo "make bench-record    run every benchmark and replace bench/results/ with that run"
	@echo "make install         install lib/acorn.so and include/sqlite-acorn.h (PREFIX=/usr/local, DESTDIR)"
	@echo "make uninstall       remove what make install installed"
	@echo "make clean           remove dist/ and build/"
	@echo "make deps            install the Debian packages to build (deps-test: to test, deps-bench: to benchmark)"
	@echo "make help            this list"

dist/acorn.so: $(SRC) $(HDR) VERSION Makefile
	@mkdir -p dist
	$(CC) $(ALL_CFLAGS) $(SO_LDFLAGS) -o $@ $(SRC) $(LDLIBS)

build/static/%.o: ext/%.c $(HDR) VERSION Makefile
	@mkdir -p build/static
	$(CC) $(ALL_CFLAGS) -DSQLITE_CORE -c -o $@ $<

dist/libacorn.a: $(STATIC_OBJ)
	@mkdir -p dist
	rm -f $@
	ar rcs $@ $(STATIC_OBJ)

build/static_test: tests/c/static_test.c ext/sqlite-acorn.h dist/libacorn.a
	@mkdir -p build
	$(CC) $(CFLAGS) $(WARN) $(EXTRA_CFLAGS) $(LDFLAGS) -Iext -o $@ $< dist/libacorn.a -lsqlite3 $(LDLIBS)

static: dist/libacorn.a build/static_test
	./build/static_test

install: dist/acorn.so
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include
	install -m 0755 dist/acorn.so $(DESTDIR)$(PREFIX)/lib/acorn.so
	install -m 0644 ext/sqlite-acorn.h $(DESTDIR)$(PREFIX)/include/sqlite-acorn.h

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/lib/acorn.so $(DESTDIR)$(PREFIX)/include/sqlite-acorn.h

clean:
	rm -rf dist build

# `make demo` and `make test` first install what a fresh Debian lacks.
deps:
	@tests/install-deps build
deps-test:
	@tests/install-deps test
deps-bench:
	@tests/install-deps bench

demo: deps
	$(MAKE) --no-print-directory dist/acorn.so
	$(SQLITE3) -batch :memory: < sql/demo.sql

# The C test programs used by the bats suites (threads, fork).
build/uuid_proc: tests/c/uuid_proc.c
	@mkdir -p build
	$(CC) $(CFLAGS) $(WARN) $(EXTRA_CFLAGS) $(LDFLAGS) -o $@ $< -lsqlite3 $(LDLIBS)

build/uuid_clock: tests/c/uuid_clock.c $(SRC) $(HDR)
	@mkdir -p build
	$(CC) $(CFLAGS) $(WARN) $(EXTRA_CFLAGS) $(LDFLAGS) -std=gnu11 -DSQLITE_CORE -DACORN_TESTING -Iext -o $@ $< $(SRC) -lsqlite3 $(LDLIBS)

TEST_BINS = build/static_test build/uuid_proc build/uuid_clock

# `make test`: a warning-free build, then every suite.
test: deps-test
	$(MAKE) --no-print-directory -B dist/acorn.so $(TEST_BINS) EXTRA_CFLAGS=-Werror
	$(MAKE) --no-print-directory static
	tests/run-bats tests/*.bats

# `make test-long`: the runs too long for `make test` (CI runs both).
test-long: deps-test
	$(MAKE) --no-print-directory dist/acorn.so $(TEST_BINS)
	tests/run-bats tests/long/*.bats

dist/asan/acorn.so: $(SRC) $(HDR) VERSION Makefile
	@mkdir -p dist/asan
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) $(SO_LDFLAGS) -o $@ $(SRC) $(LDLIBS)

test-asan: dist/asan/acorn.so $(TEST_BINS)
	ACORN=$(CURDIR)/dist/asan/acorn ACORN_PRELOAD="$(ASAN_LIBS)" \
	  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  tests/run-bats tests/*.bats

memcheck: dist/acorn.so $(TEST_BINS)
	ACORN_VALGRIND=1 ACORN_SCALE=20 tests/run-bats tests/*.bats

test-bindings: dist/acorn.so
	tests/bindings/run

# `make bench`: every bench/*.sh (or BENCH='uuid insert'), tools checked
# first, progress shown, output in build/bench/ (untracked).  Only
# `make bench-record` replaces bench/results/, all files from one run.
bench: deps-bench
	bench/run $(BENCH)

bench-record: deps-bench
	bench/run --record

# bench_insert's yardstick: one run of the same workload in plain C
# (bench/insert.sh builds and runs it).
build/ref_insert: bench/ref_insert.c
	@mkdir -p build
	$(CC) $(CFLAGS) $(WARN) -Werror $(LDFLAGS) -o $@ $< -lsqlite3 $(LDLIBS)

# cache: the benchmark program behind bench/cache.sh.
build/cache_bench: bench/cache_bench.c
	@mkdir -p build
	$(CC) $(CFLAGS) $(WARN) -Werror $(LDFLAGS) -o $@ $< -lsqlite3 $(LDLIBS)
