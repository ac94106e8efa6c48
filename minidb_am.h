/*-------------------------------------------------------------------------
 *
 * minidb_am.h
 *	  The glue: the table AM routine and what the SQL functions share.
 *
 * The layers have headers of their own, lowest first: chain.h (the
 * record), minidb_page.h (records on pages, page changes), minidb_wal.h
 * and minidb_xlog.h (WAL), minidb_hio.h (finding room), btree_view.h (the
 * page-view layer), minidb_visibility.h, minidb_tuple.h, minidb_lock.h,
 * minidb_prune.h, minidb_scan.h, minidb_modify.h and minidb_ddl.h (the
 * table AM's callbacks).  A lower layer includes no higher one.
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef MINIDB_AM_H
#define MINIDB_AM_H

#include "access/tableam.h"
#include "utils/rel.h"

/* minidb_am.c */
extern const TableAmRoutine *minidb_routine(void);
extern void minidb_check_relation(Relation rel, const char *caller);

/*
 * minidb_funcs.c: open a relation for the SQL functions that read raw
 * records (minidb_chain, minidb_stats): ownership checked by OID before any
 * lock is taken, then the relation kind and access method.
 */
extern Relation minidb_open_owned(Oid relid, const char *caller);

/* bench.c: ERROR (naming the role) unless superuser or minidb_bench */
#define MINIDB_BENCH_ROLE "minidb_bench"
extern void minidb_bench_check_caller(void);

#endif							/* MINIDB_AM_H */
