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

.PHONY: all loadable static install uninstall clean deps deps-test demo test \
        test-long test-asan memcheck test-bindings bench help

all: loadable
loadable: dist/acorn.so

help:
	@echo "make            build dist/acorn.so"
	@echo "make demo       build and run sql/demo.sql in the sqlite3 shell"
	@echo "make test       build (warnings are errors) and run every bats suite"
	@echo "make test-long  the long runs (tests/long/*.bats)"
	@echo "make test-asan  the suites with an ASan+UBSan build loaded"
	@echo "make memcheck   the suites' SQL under valgrind"
	@echo "make test-bindings  load from the CLI, Python, Node and Go"
	@echo "make bench      run bench/*.sh"
	@echo "make static     dist/libacorn.a (-DSQLITE_CORE) and its link test"
	@echo "make install PREFIX=/usr/local   install lib/acorn.so"

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

build/static_test: tests/c/static_test.c dist/libacorn.a
	@mkdir -p build
	$(CC) $(CFLAGS) $(WARN) $(EXTRA_CFLAGS) $(LDFLAGS) -o $@ $< dist/libacorn.a -lsqlite3 $(LDLIBS)

static: dist/libacorn.a build/static_test
	./build/static_test

install: dist/acorn.so
	install -d $(DESTDIR)$(PREFIX)/lib
	install -m 0755 dist/acorn.so $(DESTDIR)$(PREFIX)/lib/acorn.so

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/lib/acorn.so

clean:
	rm -rf dist build

# `make demo` and `make test` first install what a fresh Debian lacks.
deps:
	@tests/install-deps build
deps-test:
	@tests/install-deps test

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

# bench_insert's latency histogram: the test includes ext/bench_run.c itself.
build/bench_hist: tests/c/bench_hist.c $(SRC) $(HDR)
	@mkdir -p build
	$(CC) $(CFLAGS) $(WARN) $(EXTRA_CFLAGS) $(LDFLAGS) -std=gnu11 -DSQLITE_CORE -Iext -o $@ $< $(filter-out ext/bench_run.c,$(SRC)) -lsqlite3 $(LDLIBS)

TEST_BINS = build/static_test build/uuid_proc build/uuid_clock build/bench_hist

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

bench: dist/acorn.so
	@for b in bench/*.sh; do echo "== $$b"; bash $$b || exit 1; done

# bench_insert's yardstick: one run of the same workload in plain C
# (bench/insert.sh builds and runs it).
build/ref_insert: bench/ref_insert.c
	@mkdir -p build
	$(CC) $(CFLAGS) $(WARN) -Werror $(LDFLAGS) -o $@ $< -lsqlite3 $(LDLIBS)

# cache: the benchmark program behind bench/cache.sh.
build/cache_bench: bench/cache_bench.c
	@mkdir -p build
	$(CC) $(CFLAGS) $(WARN) -Werror $(LDFLAGS) -o $@ $< -lsqlite3 $(LDLIBS)
