# SPDX-License-Identifier: LGPL-2.1-or-later
#
# sandlock build. Out of tree under $(BUILDDIR) (default build/):
#   make                         libsandlock.so (soname libsandlock.so.0), libsandlock.a (the
#                                internal archive the tests and the CLI link), sandlock, sandlock.pc,
#                                pub/libsandlock.a (the installed archive: the API only),
#                                pub/sandlock (the installed CLI, without the test hooks),
#                                sandlock.1 (help2man) and sandlock.bash (completion), both
#                                made of sandlock's --help
#   make check                   unit tests (prove) and black-box tests (pytest)
#   make SANITIZE=1              ASan + UBSan build (BUILDDIR defaults to build-asan)
#   make WERROR=1                warnings are errors (CI)
#   make install PREFIX=/usr/local DESTDIR=...
#   make docs                    regenerate docs/profile-schema.md from the schema table
#   make format-check            clang-format over the tree

PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions

VERSION := 0.1.0
SOVERSION := 0

ifeq ($(SANITIZE),1)
BUILDDIR ?= build-asan
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else
BUILDDIR ?= build
SANFLAGS :=
endif

CC ?= cc
WARNINGS := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 -Wvla \
	-Wpointer-arith -Wundef -Wwrite-strings -Wmissing-declarations -Wno-unused-parameter \
	-Wimplicit-fallthrough -Wno-missing-field-initializers
ifeq ($(WERROR),1)
WARNINGS += -Werror
endif
HARDEN := -fstack-protector-strong -fstack-clash-protection
ifneq ($(SANITIZE),1)
HARDEN += -D_FORTIFY_SOURCE=2
endif
OPT ?= -O2 -g

CPPFLAGS_ALL := -D_GNU_SOURCE -Iinclude -Isrc -Isrc/basic
CFLAGS_ALL := -std=gnu17 $(OPT) $(WARNINGS) $(HARDEN) $(SANFLAGS) -fPIC -fvisibility=hidden \
	-pthread $(CFLAGS)
LDFLAGS_ALL := -Wl,-z,relro,-z,now -Wl,--as-needed $(SANFLAGS) -pthread $(LDFLAGS)
# The libraries libsandlock needs, from their pkg-config files. sandlock.pc names them in
# Requires.private, so that `pkg-config --static --libs sandlock` gives a static link all of it.
PKG_DEPS := libseccomp jansson libssl libcrypto
LIBS := $(shell pkg-config --libs $(PKG_DEPS) 2>/dev/null || echo -lseccomp -ljansson -lssl -lcrypto)
PC_REQUIRES := $(shell pkg-config --exists $(PKG_DEPS) 2>/dev/null && echo $(PKG_DEPS))
# What a static link of those needs besides them (libcrypto: -ldl -pthread): the system's
# libraries, which the CLI links as shared objects like libc.
STATIC_SYSLIBS := $(sort $(filter-out $(LIBS),$(shell pkg-config --static --libs $(PKG_DEPS) \
	2>/dev/null)))
PC_LIBS_PRIVATE := $(if $(PC_REQUIRES),,$(LIBS)) -pthread
LD ?= ld
OBJCOPY ?= objcopy
HELP2MAN ?= help2man

LIB_SRCS := $(wildcard src/basic/*.c src/policy/*.c src/plan/*.c src/launch/*.c \
	src/supervisor/*.c src/supervisor/handlers/*.c src/sandbox/*.c src/toml/*.c src/cow/*.c \
	src/http/*.c src/*.c)
CLI_SRCS := $(wildcard cli/*.c)
UNIT_SRCS := $(wildcard tests/unit/*.c)
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz-*.c)
BENCH_SRCS := $(wildcard bench/*.c)

LIB_OBJS := $(LIB_SRCS:%.c=$(BUILDDIR)/obj/%.o)
# The seccomp programs of the default policy shapes, compiled at build time (src/plan/seccomp.h).
PREBUILT_OBJ := $(BUILDDIR)/obj/gen/seccomp-prebuilt.o
ALL_LIB_OBJS := $(LIB_OBJS) $(PREBUILT_OBJ)
# The test hooks (SANDLOCK_TEST_COMMIT_CRASH: src/cow/commit.c), compiled with
# -DSANDLOCK_TEST_HOOKS into a second object of each file that has one. Those objects go into
# what the tests run (the internal archive libsandlock.a, and so sandlock, the unit tests, the
# tools), never into what `make install` installs (the shared library, pub/libsandlock.a,
# pub/sandlock): one build serves both, and nothing installed reads a test variable.
HOOKED_SRCS := src/cow/commit.c
HOOKED_OBJS := $(HOOKED_SRCS:%.c=$(BUILDDIR)/obj/test-hooks/%.o)
TEST_LIB_OBJS := $(filter-out $(HOOKED_SRCS:%.c=$(BUILDDIR)/obj/%.o),$(ALL_LIB_OBJS)) \
	$(HOOKED_OBJS)
CLI_OBJS := $(CLI_SRCS:%.c=$(BUILDDIR)/obj/%.o)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILDDIR)/tests/%)
FUZZ_BINS := $(FUZZ_SRCS:tests/fuzz/%.c=$(BUILDDIR)/tests/%)
BENCH_BINS := $(BENCH_SRCS:bench/%.c=$(BUILDDIR)/bench/%)

SHLIB := $(BUILDDIR)/libsandlock.so.$(VERSION)
SONAME := libsandlock.so.$(SOVERSION)

all: $(BUILDDIR)/libsandlock.a $(if $(SANFLAGS),$(BUILDDIR)/SANITIZED) $(SHLIB) $(BUILDDIR)/sandlock $(BUILDDIR)/sandlock.pc \
	$(BUILDDIR)/pub/libsandlock.a $(BUILDDIR)/pub/sandlock $(BUILDDIR)/sandlock.1 $(BUILDDIR)/sandlock.bash \
	$(BUILDDIR)/examples/spawn $(BUILDDIR)/examples/handlers $(UNIT_BINS) $(FUZZ_BINS) $(BENCH_BINS) $(BUILDDIR)/tools/toml-decode \
	$(BUILDDIR)/tools/schema-doc

$(BUILDDIR)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

$(BUILDDIR)/obj/test-hooks/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) -DSANDLOCK_TEST_HOOKS $(CFLAGS_ALL) -MMD -MP -c $< -o $@

$(BUILDDIR)/tools/seccomp-gen: tools/seccomp-gen.c tools/prebuilt-none.c $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $^ $(LIBS)

# The toml-test decoder (tests/toml/run-toml-test): TOML on stdin, tagged JSON on stdout.
$(BUILDDIR)/tools/toml-decode: tools/toml-decode.c $(BUILDDIR)/libsandlock.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $< $(BUILDDIR)/libsandlock.a $(LIBS)

# The profile schema reference (docs/profile-schema.md, `make docs`): the schema table and the
# CLI's flag table, so it links the CLI's objects but main.o from an archive.
$(BUILDDIR)/tools/cli.a: $(filter-out $(BUILDDIR)/obj/cli/main.o,$(CLI_OBJS))
	@mkdir -p $(dir $@)
	@rm -f $@
	$(AR) rcs $@ $^

$(BUILDDIR)/tools/schema-doc: tools/schema-doc.c tools/schema-doc-fields.h $(BUILDDIR)/tools/cli.a \
		$(BUILDDIR)/libsandlock.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $< $(BUILDDIR)/tools/cli.a \
		$(BUILDDIR)/libsandlock.a $(LIBS)

docs: $(BUILDDIR)/tools/schema-doc
	$< > docs/profile-schema.md.tmp && mv docs/profile-schema.md.tmp docs/profile-schema.md

$(BUILDDIR)/gen/seccomp-prebuilt.c: $(BUILDDIR)/tools/seccomp-gen
	@mkdir -p $(dir $@)
	$< > $@.tmp && mv $@.tmp $@

$(PREBUILT_OBJ): $(BUILDDIR)/gen/seccomp-prebuilt.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -c $< -o $@

# launch.c runs in a CLONE_VM child, in the parent's memory (see the file): no sanitizer
# instrumentation, whose shadow-memory writes would land in the parent's shadow.
$(BUILDDIR)/obj/src/launch/launch.o: CFLAGS_ALL += -fno-sanitize=all

$(BUILDDIR)/libsandlock.a: $(TEST_LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

# The installed archive: the objects linked into one, whose symbols but the API (those the code
# marks _public_) are made local, as the shared library's version script hides them, so that a
# program linking it statically cannot clash with a name of ours (closep, error_set, ...).
$(BUILDDIR)/pub/libsandlock.a: $(ALL_LIB_OBJS)
	@mkdir -p $(dir $@)
	$(LD) -r -o $(BUILDDIR)/pub/sandlock.o $^
	$(OBJCOPY) --localize-hidden $(BUILDDIR)/pub/sandlock.o
	@rm -f $@
	$(AR) rcs $@ $(BUILDDIR)/pub/sandlock.o

$(SHLIB): $(ALL_LIB_OBJS) src/libsandlock.sym
	$(CC) -shared -Wl,-soname,$(SONAME) -Wl,--version-script=src/libsandlock.sym \
		$(LDFLAGS_ALL) -o $@ $(ALL_LIB_OBJS) $(LIBS)
	ln -sf libsandlock.so.$(VERSION) $(BUILDDIR)/$(SONAME)
	ln -sf $(SONAME) $(BUILDDIR)/libsandlock.so

# The CLI uses the public header only; it links the archive, libseccomp, jansson and OpenSSL
# statically so that starting it loads no shared object but libc (see docs/PERFORMANCE.md).
# OpenSSL's relocations cost the PIE binary about 0.4 ms at exec (docs/decisions.md, "TLS").
$(BUILDDIR)/sandlock: $(CLI_OBJS) $(BUILDDIR)/libsandlock.a
	$(CC) $(LDFLAGS_ALL) -o $@ $(CLI_OBJS) $(BUILDDIR)/libsandlock.a \
		-Wl,-Bstatic $(LIBS) -Wl,-Bdynamic $(STATIC_SYSLIBS)

# The installed one: the same, on the installed archive (no test hooks).
$(BUILDDIR)/pub/sandlock: $(CLI_OBJS) $(BUILDDIR)/pub/libsandlock.a
	$(CC) $(LDFLAGS_ALL) -o $@ $(CLI_OBJS) $(BUILDDIR)/pub/libsandlock.a \
		-Wl,-Bstatic $(LIBS) -Wl,-Bdynamic $(STATIC_SYSLIBS)

$(BUILDDIR)/obj/cli/%.o: cli/%.c
	@mkdir -p $(dir $@)
	$(CC) -D_GNU_SOURCE -Iinclude $(CFLAGS_ALL) -MMD -MP -c $< -o $@

$(BUILDDIR)/examples/%: examples/%.c $(SHLIB)
	@mkdir -p $(dir $@)
	$(CC) -Iinclude $(CFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $< -L$(BUILDDIR) -lsandlock \
		-Wl,-rpath,'$$ORIGIN/..'

$(BUILDDIR)/tests/%: tests/unit/%.c tests/unit/tap.h $(BUILDDIR)/libsandlock.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) -Itests/unit $(CFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $< \
		$(BUILDDIR)/libsandlock.a $(LIBS)

# test-learn tests a pure file of the CLI (cli/learn-paths.c) too.
$(BUILDDIR)/tests/test-learn: tests/unit/test-learn.c tests/unit/tap.h \
		$(BUILDDIR)/obj/cli/learn-paths.o $(BUILDDIR)/libsandlock.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) -Itests/unit -Icli $(CFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $< \
		$(BUILDDIR)/obj/cli/learn-paths.o $(BUILDDIR)/libsandlock.a $(LIBS)

# Fuzz targets: built here with a main() that replays the corpus (tests run it); built with
# libFuzzer by `make fuzz` (clang).
$(BUILDDIR)/tests/fuzz-%: tests/fuzz/fuzz-%.c tests/fuzz/replay.c $(BUILDDIR)/libsandlock.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) $(LDFLAGS_ALL) \
		-DCORPUS_DIR=\"tests/fuzz/corpus/$*\" -o $@ $< tests/fuzz/replay.c \
		$(BUILDDIR)/libsandlock.a $(LIBS)

$(BUILDDIR)/bench/%: bench/%.c $(BUILDDIR)/libsandlock.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $< $(BUILDDIR)/libsandlock.a $(LIBS)

# Marks a sanitizer build for the tests (tests/integration/conftest.py).
$(BUILDDIR)/SANITIZED:
	@mkdir -p $(BUILDDIR)
	touch $@

# sandlock.pc, made again by install for the PREFIX given there. Directories under PREFIX are
# written as ${prefix}/..., so that the file moves with them (pkg-config --define-prefix).
PC_SUBST = sed -e 's|@PREFIX@|$(PREFIX)|' \
	-e 's|@LIBDIR@|$(patsubst $(PREFIX)/%,$${prefix}/%,$(LIBDIR))|' \
	-e 's|@INCLUDEDIR@|$(patsubst $(PREFIX)/%,$${prefix}/%,$(INCLUDEDIR))|' \
	-e 's|@VERSION@|$(VERSION)|' \
	-e 's|@REQUIRES_PRIVATE@|$(PC_REQUIRES)|' -e 's|@LIBS_PRIVATE@|$(strip $(PC_LIBS_PRIVATE))|'

$(BUILDDIR)/sandlock.pc: sandlock.pc.in Makefile
	@mkdir -p $(BUILDDIR)
	$(PC_SUBST) $< > $@

# sandlock(1) and the bash completion, made of the help sandlock prints (its flag table,
# cli/options.c): they cannot say other than --help. A sanitized sandlock runs here without
# leak checking (the tests do that).
$(BUILDDIR)/sandlock.1: $(BUILDDIR)/sandlock tools/man-help tools/sandlock.h2m
	@command -v $(HELP2MAN) >/dev/null || \
		{ echo "sandlock.1 needs help2man (Debian: apt-get install help2man)" >&2; exit 1; }
	SANDLOCK=$(BUILDDIR)/sandlock ASAN_OPTIONS=detect_leaks=0 $(HELP2MAN) --no-info \
		--include=tools/sandlock.h2m --output=$@.tmp tools/man-help && mv $@.tmp $@

$(BUILDDIR)/sandlock.bash: $(BUILDDIR)/sandlock tools/gen-completion
	ASAN_OPTIONS=detect_leaks=0 tools/gen-completion $(BUILDDIR)/sandlock > $@.tmp && \
		mv $@.tmp $@

FUZZ_CC ?= clang
fuzz: $(FUZZ_SRCS) $(LIB_SRCS) $(BUILDDIR)/gen/seccomp-prebuilt.c
	@mkdir -p $(BUILDDIR)/libfuzzer
	for f in $(FUZZ_SRCS); do \
		$(FUZZ_CC) $(CPPFLAGS_ALL) -std=gnu17 -g -O1 -Wall -Wextra \
			-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
			-o $(BUILDDIR)/libfuzzer/$$(basename $$f .c) $$f $(LIB_SRCS) \
			$(BUILDDIR)/gen/seccomp-prebuilt.c $(LIBS) -pthread \
			|| exit 1; \
	done

check: all
	tests/run --build $(BUILDDIR)

INSTALLED := $(SHLIB) $(BUILDDIR)/pub/libsandlock.a $(BUILDDIR)/pub/sandlock $(BUILDDIR)/sandlock.1 \
	$(BUILDDIR)/sandlock.bash

install: $(INSTALLED)
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(BINDIR) \
		$(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR)
	install -m 0755 $(SHLIB) $(DESTDIR)$(LIBDIR)/
	ln -sf libsandlock.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libsandlock.so
	install -m 0644 $(BUILDDIR)/pub/libsandlock.a $(DESTDIR)$(LIBDIR)/
	install -m 0644 include/sandlock.h $(DESTDIR)$(INCLUDEDIR)/
	install -m 0755 $(BUILDDIR)/pub/sandlock $(DESTDIR)$(BINDIR)/
	$(PC_SUBST) sandlock.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/sandlock.pc
	install -m 0644 $(BUILDDIR)/sandlock.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 $(BUILDDIR)/sandlock.bash $(DESTDIR)$(BASHCOMPDIR)/sandlock

format-check:
	clang-format --dry-run --Werror $(LIB_SRCS) $(CLI_SRCS) include/sandlock.h

clean:
	rm -rf build build-asan

.PHONY: all check install format-check clean fuzz docs

-include $(ALL_LIB_OBJS:.o=.d) $(HOOKED_OBJS:.o=.d) $(CLI_OBJS:.o=.d)
