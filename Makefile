# acorn: a loadable SQLite extension.  `make help` lists the targets.

VERSION   := $(shell cat VERSION)
COMMIT    := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
DATE      := $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
PREFIX    ?= /usr/local
SQLITE3   ?= sqlite3

CC        ?= cc
OPT       ?= -O2
CFLAGS    ?= $(OPT) -Wall -Wextra
EXTRA_CFLAGS ?=
ALL_CFLAGS = $(CFLAGS) $(EXTRA_CFLAGS) -fPIC -fvisibility=hidden -std=gnu11 \
  -DACORN_VERSION='"$(VERSION)"' -DACORN_COMMIT='"$(COMMIT)"' \
  -DACORN_BUILD_DATE='"$(DATE)"' -DACORN_CFLAGS='"$(CFLAGS) $(EXTRA_CFLAGS)"'
LDLIBS    = -lpthread -lm

SRC       := $(wildcard ext/*.c)
HDR       := $(wildcard ext/*.h)
STATIC_OBJ:= $(patsubst ext/%.c,build/static/%.o,$(SRC))

SAN_FLAGS  = -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
ASAN_LIBS  = $(shell $(CC) -print-file-name=libasan.so) $(shell $(CC) -print-file-name=libubsan.so)

.PHONY: all loadable static install uninstall clean demo test test-asan memcheck \
        test-bindings bench help

all: loadable
loadable: dist/acorn.so

help:
	@echo "make            build dist/acorn.so"
	@echo "make demo       build and run sql/demo.sql in the sqlite3 shell"
	@echo "make test       build (warnings are errors) and run every bats suite"
	@echo "make test-asan  the suites with an ASan+UBSan build loaded"
	@echo "make memcheck   the suites' SQL under valgrind"
	@echo "make test-bindings  load from the CLI, Python, Node and Go"
	@echo "make bench      run bench/*.sh"
	@echo "make static     dist/libacorn.a (-DSQLITE_CORE) and its link test"
	@echo "make install PREFIX=/usr/local   install lib/acorn.so"

dist/acorn.so: $(SRC) $(HDR) VERSION Makefile
	@mkdir -p dist
	$(CC) $(ALL_CFLAGS) -shared -o $@ $(SRC) $(LDLIBS)

build/static/%.o: ext/%.c $(HDR) VERSION Makefile
	@mkdir -p build/static
	$(CC) $(ALL_CFLAGS) -DSQLITE_CORE -c -o $@ $<

dist/libacorn.a: $(STATIC_OBJ)
	@mkdir -p dist
	rm -f $@
	ar rcs $@ $(STATIC_OBJ)

build/static_test: tests/c/static_test.c dist/libacorn.a
	$(CC) $(CFLAGS) -o $@ $< dist/libacorn.a -lsqlite3 $(LDLIBS)

static: dist/libacorn.a build/static_test
	./build/static_test

install: dist/acorn.so
	install -d $(DESTDIR)$(PREFIX)/lib
	install -m 0755 dist/acorn.so $(DESTDIR)$(PREFIX)/lib/acorn.so

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/lib/acorn.so

clean:
	rm -rf dist build

demo: dist/acorn.so
	$(SQLITE3) -batch :memory: < sql/demo.sql

# The C test programs used by the bats suites (threads, fork).
build/uuid_threads: tests/c/uuid_threads.c dist/acorn.so
	@mkdir -p build
	$(CC) $(CFLAGS) -o $@ $< -lsqlite3 $(LDLIBS)

TEST_BINS = build/uuid_threads

# `make test`: a warning-free build, then every suite.
test:
	$(MAKE) --no-print-directory -B dist/acorn.so EXTRA_CFLAGS=-Werror
	$(MAKE) --no-print-directory static $(TEST_BINS)
	tests/run-bats tests/*.bats

dist/asan/acorn.so: $(SRC) $(HDR) VERSION Makefile
	@mkdir -p dist/asan
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -shared -o $@ $(SRC) $(LDLIBS)

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

# cache: the benchmark program behind bench/cache.sh.
build/cache_bench: bench/cache_bench.c
	@mkdir -p build
	$(CC) $(CFLAGS) -o $@ $< -lsqlite3 $(LDLIBS)
