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

.PHONY: all loadable static install uninstall clean deps deps-test deps-fuzz \
        demo test test-long test-asan memcheck test-bindings bench fuzz \
        fuzz-repro help

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
	@echo "make fuzz [FUZZ_SECONDS=60]   build tests/fuzz/fuzz_acorn.c (clang, libFuzzer,"
	@echo "                ASan, UBSan) and fuzz acorn's SQL; a crash is saved as"
	@echo "                build/fuzz/crash-<sha1> and fails the target"
	@echo "make fuzz-repro FILE=build/fuzz/crash-...   run that input again, printing"
	@echo "                every statement it runs and what each returned"
	@echo "                (both take FUZZ_SQLITE=.../sqlite3.c: an instrumented SQLite)"
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
deps-fuzz:
	@tests/install-deps fuzz

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
# branches too.  FACTS.md says where amalgamations come from (npm tarballs).
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

fuzz-repro: $(FUZZ_BIN)
	@test -n "$(FILE)" || { echo "usage: make fuzz-repro FILE=build/fuzz/crash-..."; exit 2; }
	ACORN_FUZZ_TRACE=1 $(FUZZ_BIN) $(FILE)
