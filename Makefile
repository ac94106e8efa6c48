# minidb_am: a PostgreSQL 15 table access method (PGXS build)
#
#   make                 build the module (warning-free with -Wall -Wextra;
#                        CI adds make COPT=-Werror)
#   make install         install into the server found by pg_config
#   make installcheck    pg_regress (sql/), isolation (specs/), TAP (t/)
#                        against a running server (PGHOST/PGPORT)
#   make regresscheck | isolationcheck | tapcheck    one of those alone
#   make unittest        chain.c unit tests, standalone (gcc + shim)
#   make fuzz            libFuzzer differential harness, FUZZ_SECONDS (60)
#   make plantedbug      the harness must catch a planted fast-walker bug
#                        within PLANT_SECONDS (120)
#   make seeds           regenerate the committed fuzz seed corpus
#   make sanitizecheck   pg_regress + isolation against an ASan + UBSan
#                        build in a private server copy (test/sanitize/)

MODULE_big = minidb_am
AM_OBJS = minidb_am.o minidb_lock.o minidb_visibility.o minidb_tuple.o btree_view.o minidb_page.o \
	minidb_scan.o minidb_modify.o minidb_prune.o minidb_ddl.o minidb_vacuum.o \
	minidb_funcs.o bench.o minidb_stats.o minidb_wal.o minidb_xlog.o \
	minidb_repair.o minidb_verify.o minidb_hio.o minidb_logical.o
OBJS = chain.o chain_v3.o minidb_chain_funcs.o $(AM_OBJS)

EXTENSION = minidb_am
# Versions (README, "Upgrades"): the script of the default version is built
# from sqlsrc/; the script of each released version, and the update script
# from it to the next, are files in upgrade/ (a released version's script
# is never edited again).
DATA_built = minidb_am--1.1.sql
DATA = upgrade/minidb_am--1.0.sql upgrade/minidb_am--1.0--1.1.sql
SQLSRC := $(sort $(wildcard sqlsrc/*.sql))
PGFILEDESC = "minidb_am - inline version chain table access method"

# Tests are picked up from their folders; ":=" keeps an empty list
# undefined for PGXS's ifdef.
REGRESS := $(sort $(basename $(notdir $(wildcard sql/*.sql))))
ISOLATION := $(sort $(basename $(notdir $(wildcard specs/*.spec))))
ifneq ($(wildcard t/*.pl),)
TAP_TESTS = 1
endif

# PostgreSQL's headers trip these -Wextra warnings; everything else counts
PG_CFLAGS = -Wextra -Wno-unused-parameter -Wno-sign-compare \
	-Wno-missing-field-initializers

EXTRA_CLEAN = .sqlsrc.list results/ regression.diffs regression.out output_iso/ \
	tmp_check/ log/ $(UNIT_BIN) $(UNIT_V3_BIN) $(FUZZ_BIN) $(FUZZ_PLANTED_BIN) \
	$(SEEDGEN_BIN) test/fuzz/work/

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# Rebuild the script when a sqlsrc file is added or removed, not only when
# one changes: .sqlsrc.list records the list seen last time.
SQLSRC_LIST_UPDATE := $(shell echo '$(SQLSRC)' | cmp -s - .sqlsrc.list || echo '$(SQLSRC)' > .sqlsrc.list)

$(DATA_built): $(SQLSRC) .sqlsrc.list
	cat $(SQLSRC) > $@

# Every object depends on the record format
$(OBJS): $(wildcard *.h)

# ---------------------------------------------------------------------
# Test suites that need no server: chain.c built standalone
# ---------------------------------------------------------------------

STANDALONE_CPPFLAGS = -DMINIDB_STANDALONE -I. -Itest/unit \
	-I$(includedir_server) -I$(includedir)
STANDALONE_WARN = -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare \
	-Wno-missing-field-initializers
SHIM = test/unit/chain_shim.c
SHIM_H = test/unit/chain_shim.h

UNIT_CC ?= gcc
UNIT_BIN = test/unit/test_chain
UNIT_V3_BIN = test/unit/test_chain_v3

FUZZ_CC ?= clang
FUZZ_CFLAGS = -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=all -Wno-ignored-attributes -DMINIDB_CHECK_FAST_PATH
FUZZ_BIN = test/fuzz/fuzz_chain
FUZZ_PLANTED_BIN = test/fuzz/fuzz_chain_planted
FUZZ_SECONDS ?= 60
PLANT_SECONDS ?= 120
SEEDGEN_BIN = test/fuzz/gen_seeds

$(UNIT_BIN): test/unit/test_chain.c test/unit/ordered_check.h test/unit/single_plain_check.h chain.c chain_v3.c chain.h chain_int.h $(SHIM) $(SHIM_H)
	$(UNIT_CC) -g -O1 $(STANDALONE_WARN) $(COPT) $(STANDALONE_CPPFLAGS) \
		-DMINIDB_CHECK_FAST_PATH -o $@ test/unit/test_chain.c $(SHIM) chain.c chain_v3.c

$(UNIT_V3_BIN): test/unit/test_chain_v3.c test/unit/ordered_check.h test/unit/single_plain_check.h chain.c chain_v3.c chain.h chain_int.h $(SHIM) $(SHIM_H)
	$(UNIT_CC) -g -O1 $(STANDALONE_WARN) $(COPT) $(STANDALONE_CPPFLAGS) \
		-DMINIDB_CHECK_FAST_PATH -o $@ test/unit/test_chain_v3.c $(SHIM) chain.c chain_v3.c

$(FUZZ_BIN): test/fuzz/fuzz_chain.c chain.c chain_v3.c chain.h chain_int.h $(SHIM) $(SHIM_H)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(STANDALONE_WARN) $(COPT) $(STANDALONE_CPPFLAGS) \
		-o $@ test/fuzz/fuzz_chain.c $(SHIM) chain.c chain_v3.c

$(FUZZ_PLANTED_BIN): test/fuzz/fuzz_chain.c chain.c chain_v3.c chain.h chain_int.h $(SHIM) $(SHIM_H)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(STANDALONE_WARN) $(COPT) $(STANDALONE_CPPFLAGS) \
		-DMINIDB_PLANT_EARLY_EXIT -o $@ test/fuzz/fuzz_chain.c $(SHIM) chain.c chain_v3.c

$(SEEDGEN_BIN): test/fuzz/gen_seeds.c chain.c chain_v3.c chain.h chain_int.h $(SHIM) $(SHIM_H)
	$(UNIT_CC) -g -O1 $(STANDALONE_WARN) $(COPT) $(STANDALONE_CPPFLAGS) \
		-o $@ test/fuzz/gen_seeds.c $(SHIM) chain.c chain_v3.c

.PHONY: unittest fuzz plantedbug seeds regresscheck isolationcheck tapcheck \
	sanitizecheck

unittest: $(UNIT_BIN) $(UNIT_V3_BIN)
	$(UNIT_BIN)
	$(UNIT_V3_BIN)

fuzz: $(FUZZ_BIN)
	test/fuzz/run_fuzz.sh fuzz $(FUZZ_BIN) $(FUZZ_SECONDS)

plantedbug: $(FUZZ_PLANTED_BIN)
	test/fuzz/run_fuzz.sh planted $(FUZZ_PLANTED_BIN) $(PLANT_SECONDS)

seeds: $(SEEDGEN_BIN)
	rm -rf test/fuzz/seeds
	mkdir -p test/fuzz/seeds/valid test/fuzz/seeds/damaged
	$(SEEDGEN_BIN) test/fuzz/seeds

# ---------------------------------------------------------------------
# Server suites one at a time (make installcheck runs them all)
# ---------------------------------------------------------------------

regresscheck:
ifdef REGRESS
	$(pg_regress_installcheck) $(REGRESS_OPTS) $(REGRESS)
else
	@echo "no sql/*.sql regression tests"
endif

isolationcheck:
ifdef ISOLATION
	$(pg_isolation_regress_installcheck) $(ISOLATION_OPTS) $(ISOLATION)
else
	@echo "no specs/*.spec isolation tests"
endif

tapcheck:
ifdef TAP_TESTS
	$(prove_installcheck)
else
	@echo "no t/*.pl TAP tests"
endif

# ---------------------------------------------------------------------
# The server suites against an AddressSanitizer + UBSan build, in a copy
# of the checkout and a private copy of the server (test/sanitize/run.sh;
# never touches this tree's objects nor the installed library)
# ---------------------------------------------------------------------

sanitizecheck:
	PG_CONFIG=$(PG_CONFIG) test/sanitize/run.sh $(SANITIZE_WORK)
