# sked — the two commands of the README, and a few more for developers.
#
#   make demo       install what is missing, build, run the showcase
#   make test       install what is missing, build, start private database
#                   servers, run every test (also under ASan/UBSan), stop
#   make build      configure and build into build/ (configure runs every
#                   time, so driver libraries installed since are built)
#   make deb        the Debian packages (libskedN, libsked-dev, sked) of a
#                   build for the prefix /usr (build-deb/), in build-deb/
#   make asan       build with AddressSanitizer+UBSan into build-asan/
#   make tsan       build with ThreadSanitizer into build-tsan/
#   make fuzz       libFuzzer runs of every fuzz target (clang)
#   make format     apply .clang-format;  make format-check  to verify
#   make install    install into PREFIX (default /usr/local)

BUILD ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
# seconds of libFuzzer per target in `make test`
FUZZ_SHORT ?= 5
PREFIX ?= /usr/local
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all build demo test test-only asan tsan deps-demo deps-test format test-index \
	format-check install clean bench fuzz deb

all: build

deps-demo:
	@sh scripts/deps.sh demo

deps-test:
	@sh scripts/deps.sh test

# Configure on every build, not only the first: CMake probes again for a
# driver library it did not find before (`make demo` configures before
# `make test` installs libmariadb and unixODBC), so the drivers built are
# those whose libraries are installed now. A configure that changes
# nothing costs about a second and rebuilds nothing.
build:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DCMAKE_INSTALL_PREFIX=$(PREFIX)
	cmake --build $(BUILD) -j $(JOBS)

demo: deps-demo
	@$(MAKE) --no-print-directory build
	$(BUILD)/sked demo

test: deps-test
	@$(MAKE) --no-print-directory build asan tsan
	sh scripts/run-tests.sh $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD)
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(FUZZ_SHORT)

# the suite without installing anything (for a machine already set up)
test-only: build asan tsan
	sh scripts/run-tests.sh $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD)
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(FUZZ_SHORT)

asan:
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DSKED_SANITIZE=ON
	cmake --build $(ASAN_BUILD) -j $(JOBS)

# ThreadSanitizer: the unit tests and a contention test on SQLite and
# PostgreSQL run under it in `make test` (scripts/run-tests.sh)
tsan:
	cmake -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DCMAKE_C_FLAGS="-fsanitize=thread -fno-omit-frame-pointer" \
		-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread \
		-DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread
	cmake --build $(TSAN_BUILD) -j $(JOBS)

install: build
	cmake --install $(BUILD)

# The packages need the prefix /usr and Debian's hardening flags, so they
# are built from a build of their own (scripts/deb-build.sh); scripts/mkdeb.sh splits its install into the three packages
# (docs/packaging.md), which land in $(DEB_BUILD)/.
DEB_BUILD ?= build-deb
deb:
	sh scripts/deb-build.sh $(DEB_BUILD) $(JOBS)
	sh scripts/mkdeb.sh $(DEB_BUILD) $(DEB_BUILD)

# docs/test-index.md, one row per test file from its header comment
test-index:
	python3 tests/build/test_index.py .

FORMATTED = include/*.h src/*/*.[ch] src/*/*/*.[ch] cli/*.[ch] cli/*/*.[ch] cli/*/*/*.[ch] tests/unit/*.[ch] tools/*.c \
	examples/*.c

format:
	clang-format -i $(FORMATTED)

format-check:
	clang-format --dry-run --Werror $(FORMATTED)

# libFuzzer runs of the fuzz targets (clang), FUZZ_SECONDS each, one after
# another (one core); the seed corpus lives in tests/fuzz/corpus/NAME and
# is replayed by every build's CTest. What a run finds is kept in
# $(FUZZ_BUILD)/corpus-NAME (new inputs) and crash-* files (findings).
#   make fuzz                       every target, 60 s each
#   make fuzz FUZZ_SECONDS=600      the long run (docs/testing.md)
#   make fuzz FUZZ_TARGETS=cron     one target
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= url_redact cron tzif dur_time config pipe outcome http tpl sqlsplit wake graph
fuzz:
	cmake -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang -DSKED_FUZZ=ON \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target \
		$(patsubst %,fuzz_%_lf,$(FUZZ_TARGETS))
	@set -e; for t in $(FUZZ_TARGETS); do \
		c=$$t; [ $$t = url_redact ] && c=url; \
		mkdir -p $(FUZZ_BUILD)/corpus-$$c; \
		echo "== fuzz_$$t: $(FUZZ_SECONDS) s"; \
		(cd $(FUZZ_BUILD) && ./fuzz_$${t}_lf \
			-max_total_time=$(FUZZ_SECONDS) -max_len=4096 \
			-print_final_stats=1 corpus-$$c \
			$(CURDIR)/tests/fuzz/corpus/$$c 2>fuzz_$$t.log) || \
			{ tail -n 40 $(FUZZ_BUILD)/fuzz_$$t.log; exit 1; }; \
		grep -E '^(stat::number_of_executed_units|#[0-9]+ +DONE)' \
			$(FUZZ_BUILD)/fuzz_$$t.log || true; \
	done

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(FUZZ_BUILD) $(DEB_BUILD)
