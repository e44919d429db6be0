# tapir - build, test, lint and install.
#
# `make` builds ./tapir; `make test` runs the unit and integration suites;
# `make check-asan` builds with ASan+UBSan into build-asan/ and runs the same
# suites against that binary; `make check-tsan` builds with ThreadSanitizer
# into build-tsan/ and runs the unit tests and the datapath's bats files
# with two tap queues against it (hack/check-tsan.sh); `make lint` runs cppcheck and clang-format;
# `make deb` builds a Debian package into $(BUILD)/deb/; `make fuzz` builds
# the libFuzzer harnesses with clang into build-fuzz/ and runs each for
# FUZZ_TIME seconds (hack/fuzz.sh); `make soak` churns traffic through one
# tapir and checks that its RSS and fds stay flat.

VERSION := 0.1.0
PREFIX ?= /usr/local
# The docs --help and tapir(1) cite, installed where they say.
DOCDIR ?= $(PREFIX)/share/doc/tapir
DOCS := README.md $(wildcard docs/*.md)
BUILD ?= build
PKGS := jansson libmnl libevent libseccomp
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=all
# ThreadSanitizer (gcc's: its reports come symbolized without an external
# symbolizer). -pthread here as well as in the normal flags, so that this
# build never depends on them.
TSAN_BUILD := build-tsan
NOCOND_BUILD := build-nocond
TSAN_FLAGS := -fsanitize=thread -fno-omit-frame-pointer -pthread

CFLAGS ?= -O2 -g
WARN := -std=gnu11 -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wvla
# Lazily evaluated, so that `make help` or `make lint` works before the
# libraries are installed.
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS))
# Datapath threads (driver/thread/thread.c), one per tap queue.
PKG_LIBS = $(shell pkg-config --libs $(PKGS)) -pthread
ALL_CFLAGS = $(WARN) $(CPPFLAGS) $(CFLAGS) $(EXTRA_CFLAGS) -I. $(PKG_CFLAGS) \
	-pthread -DTAPIR_VERSION='"$(VERSION)"' -MMD -MP
ALL_LDFLAGS = $(LDFLAGS) $(EXTRA_CFLAGS)

LIB_SRCS := $(filter-out driver/front/main.c,$(wildcard driver/*/*.c)) \
	$(wildcard ipc/*.c)
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
MAIN_OBJ := $(BUILD)/driver/front/main.o
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
UNIT_RUNNER_OBJ := $(BUILD)/tests/unit/unit.o $(BUILD)/tests/unit/fakectx.o \
	$(BUILD)/tests/unit/tcpguest.o
BENCH_TOOLS := $(patsubst benchmark/%.c,$(BUILD)/benchmark/%,$(wildcard benchmark/*.c))
# oldkernel.c and tsanfork.c are LD_PRELOAD shims (shared objects), not
# programs; tsanfork.so is for `make check-tsan` only.
TEST_SHIMS := $(BUILD)/tools/oldkernel.so
TSAN_SHIM := $(BUILD)/tools/tsanfork.so
TEST_TOOLS := $(patsubst tests/tools/%.c,$(BUILD)/tools/%,$(filter-out \
	tests/tools/oldkernel.c tests/tools/tsanfork.c,$(wildcard tests/tools/*.c)))
C_FILES := $(wildcard driver/*/*.[ch] ipc/*.[ch] tests/unit/*.[ch] \
	tests/fuzz/*.[ch] tests/tools/*.c benchmark/*.c)
# libFuzzer harnesses (tests/fuzz/fuzz_NAME.c), built by clang with ASan and
# UBSan; the library objects are instrumented for coverage too.
FUZZ_BUILD := build-fuzz
FUZZ_TIME ?= 30
FUZZ_NAMES := frame frames api ipc cli
FUZZ_SAN := -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=all
FUZZ_BINS := $(FUZZ_NAMES:%=$(BUILD)/tests/fuzz_%)
FUZZ_SUPPORT_OBJS := $(BUILD)/tests/fuzz/fuzzenv.o $(BUILD)/tests/unit/fakectx.o

.PHONY: all FORCE test test-bins unit check-asan check-tsan tsan-tools lint format install clean bench bench-tools nocond \
	deb fuzz fuzz-build fuzz-bins soak
# Keep unit-test objects: otherwise make deletes them after the summary line.
.SECONDARY:

all: tapir

tapir: $(BUILD)/tapir
	cp $< $@

$(BUILD)/tapir: $(MAIN_OBJ) $(BUILD)/libtapir.a
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PKG_LIBS)

$(BUILD)/libtapir.a: $(LIB_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

# --help names the docs by their installed path: cli.o is built again
# when DOCDIR (or PREFIX) changes, e.g. from `make` to `make install
# PREFIX=/usr`; the stamp changes only then.
$(BUILD)/driver/front/cli.o: ALL_CFLAGS += -DTAPIR_DOCDIR='"$(DOCDIR)"'
$(BUILD)/driver/front/cli.o: $(BUILD)/docdir.stamp
$(BUILD)/docdir.stamp: FORCE
	@mkdir -p $(dir $@)
	@echo '$(DOCDIR)' >$@.tmp
	@if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; fi
FORCE:

$(BUILD)/tests/test_%: $(BUILD)/tests/unit/test_%.o $(UNIT_RUNNER_OBJ) $(BUILD)/libtapir.a
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PKG_LIBS)

# test_log holds log.c's callers of poll() together after it returns, as
# threads can meet there (tests/unit/test_log.c).
$(BUILD)/tests/test_log: ALL_LDFLAGS += -Wl,--wrap=poll
# test_apiclient holds the client after connect() until the server hung up
# (tests/unit/test_apiclient.c).
$(BUILD)/tests/test_apiclient: ALL_LDFLAGS += -Wl,--wrap=connect

# -fsanitize=fuzzer brings libFuzzer's main(); the objects were compiled
# with fuzzer-no-link (EXTRA_CFLAGS of fuzz-build).
$(BUILD)/tests/fuzz_%: $(BUILD)/tests/fuzz/fuzz_%.o $(FUZZ_SUPPORT_OBJS) \
		$(BUILD)/libtapir.a
	$(CC) $(ALL_LDFLAGS) -fsanitize=fuzzer -o $@ $^ $(PKG_LIBS)

$(BUILD)/benchmark/%: benchmark/%.c
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(CFLAGS) $(EXTRA_CFLAGS) -o $@ $<

$(BUILD)/tools/%: tests/tools/%.c
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(CFLAGS) $(EXTRA_CFLAGS) -o $@ $<

# Static and never sanitized: it runs in the engine tests' busybox image.
$(BUILD)/tools/udpecho: tests/tools/udpecho.c
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(CFLAGS) -static -o $@ $<

# Never sanitized: it is preloaded into uninstrumented programs too.
$(BUILD)/tools/%.so: tests/tools/%.c
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(CFLAGS) -fPIC -shared -o $@ $< -ldl

unit: $(UNIT_BINS)

# The shim too: the benchmark's tapir-X.Y drivers preload it; the UDP
# echo pair of the conditions suite; the connections suite's echo servers.
bench-tools: $(BENCH_TOOLS) $(TEST_SHIMS) $(BUILD)/tools/udpprobe \
	$(BUILD)/tools/udpecho $(BUILD)/tools/manyconn

# What the tests run: enough to run one bats file alone (README).
test-bins: $(BUILD)/tapir unit bench-tools $(TEST_TOOLS) $(TEST_SHIMS)

# tests/run.sh prints the single `N passed, N failed` line for both suites.
test: test-bins
	TAPIR_BUILD=$(BUILD) tests/run.sh

check-asan:
	$(MAKE) BUILD=build-asan CFLAGS="-O1 -g" EXTRA_CFLAGS="$(SAN_FLAGS)" test

# The helpers the tests run stay uninstrumented: they are not under test,
# and a TSan program dies at start on a kernel with 32 bits of mmap
# entropy unless started under `setarch -R` (see hack/check-tsan.sh).
tsan-tools: bench-tools $(TEST_TOOLS) $(TSAN_SHIM)

check-tsan:
	$(MAKE) BUILD=$(TSAN_BUILD) CFLAGS="-O1 -g" tsan-tools
	$(MAKE) BUILD=$(TSAN_BUILD) CFLAGS="-O1 -g" EXTRA_CFLAGS="$(TSAN_FLAGS)" \
		$(TSAN_BUILD)/tapir unit
	TAPIR_BUILD=$(TSAN_BUILD) hack/check-tsan.sh

fuzz-bins: $(FUZZ_BINS)

fuzz-build:
	$(MAKE) BUILD=$(FUZZ_BUILD) CC=clang CFLAGS="-O1 -g" \
		EXTRA_CFLAGS="-fsanitize=fuzzer-no-link $(FUZZ_SAN)" fuzz-bins

# Regression inputs first, then every harness for FUZZ_TIME seconds, each
# inside its own `unshare --net`: see hack/fuzz.sh.
fuzz: fuzz-build
	FUZZ_BUILD=$(FUZZ_BUILD) hack/fuzz.sh $(FUZZ_TIME) $(FUZZ_NAMES)

# The layers include and call only downward (driver/LAYERS): ipc/ nothing
# of driver/, and each folder of driver/ only its own and those below it.
# The calls are read from the objects, so lint builds them first.
lint: $(LIB_OBJS) $(MAIN_OBJ)
	hack/layers.sh $(BUILD)
	cppcheck --quiet --error-exitcode=1 --enable=warning,portability \
		--std=c11 --inline-suppr -I. driver ipc tests/unit tests/fuzz \
		tests/tools benchmark
	clang-format --dry-run -Werror $(C_FILES)

format:
	clang-format -i $(C_FILES)

# tapir(1) names the docs as the Debian package installs them; here, as
# DOCDIR has them.
install: $(BUILD)/tapir
	install -D -m 0755 $(BUILD)/tapir $(DESTDIR)$(PREFIX)/bin/tapir
	install -d $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(DOCDIR)
	sed 's|/usr/share/doc/tapir/|$(DOCDIR)/|g' docs/tapir.1 \
		>$(DESTDIR)$(PREFIX)/share/man/man1/tapir.1
	chmod 0644 $(DESTDIR)$(PREFIX)/share/man/man1/tapir.1
	install -m 0644 $(DOCS) $(DESTDIR)$(DOCDIR)/
	# pasta's name, where engines can be pointed at it and nothing on
	# PATH finds it instead of a real pasta (docs/engines.md).
	install -d $(DESTDIR)$(PREFIX)/libexec/tapir
	ln -sfn ../../bin/tapir $(DESTDIR)$(PREFIX)/libexec/tapir/pasta

# As root: SOAK_TIME seconds of short TCP connections both ways, UDP flows,
# pings, DNS, fragments and API forward churn through one tapir, sampled
# into $(BUILD)/soak/soak.csv and plotted to soak.png (hack/soak.sh).
SOAK_TIME ?= 120
soak: $(BUILD)/tapir
	TAPIR_BUILD=$(BUILD) SOAK_TIME=$(SOAK_TIME) hack/soak.sh

# Packages first: on a fresh machine the build itself needs the -dev ones.
# As root (`sudo make bench`), hack/give-back.sh hands the outputs to the
# invoking user and restores any tracked file the run replaced
# (docs/benchmarks.md), so that user's plain `make` still works.
bench:
	@if [ "$$(id -u)" = 0 ]; then hack/install-deps.sh; fi
	hack/give-back.sh $(BUILD) tapir -- $(MAKE) tapir bench-tools
	hack/give-back.sh $(BUILD) benchmark/results -- \
		env TAPIR_BUILD=$(BUILD) benchmark/run-matrix.sh

# A .deb built with debhelper from a copy of the tree in $(BUILD)/deb/src
# (dpkg-buildpackage writes next to the source directory): the binary, the
# man page and the docs; dependencies from dpkg-shlibdeps.
DEB_DIR := $(BUILD)/deb
deb:
	@v=$$(dpkg-parsechangelog -l debian/changelog -S Version); \
	case $$v in $(VERSION)) ;; *) echo "debian/changelog has $$v," \
		"the Makefile $(VERSION)" >&2; exit 1;; esac
	rm -rf $(DEB_DIR)
	mkdir -p $(DEB_DIR)/src
	tar -cf - --exclude='./build*' --exclude=./.git --exclude=./tapir \
		--exclude=./benchmark/results . | tar -C $(DEB_DIR)/src -xf -
	cd $(DEB_DIR)/src && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		dpkg-buildpackage -b -us -uc -Jauto
	@ls $(DEB_DIR)/*.deb

# tapir without network conditions (docs/conditions.md): the benchmark's
# tapir-nocond, which shows what having them costs when none is set.
nocond:
	$(MAKE) BUILD=$(NOCOND_BUILD) EXTRA_CFLAGS="-DTAPIR_NO_CONDITIONS" \
		$(NOCOND_BUILD)/tapir

clean:
	rm -rf build build-asan $(TSAN_BUILD) $(FUZZ_BUILD) $(NOCOND_BUILD) tapir

# Unit-test objects too: a changed header must rebuild the tests that use
# it, or they run against a stale struct layout.
-include $(LIB_OBJS:.o=.d) $(MAIN_OBJ:.o=.d) \
	$(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/unit/%.d) \
	$(UNIT_RUNNER_OBJ:.o=.d) \
	$(FUZZ_NAMES:%=$(BUILD)/tests/fuzz/fuzz_%.d) $(FUZZ_SUPPORT_OBJS:.o=.d)
