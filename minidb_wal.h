/*-------------------------------------------------------------------------
 *
 * minidb_wal.h
 *	  WAL: logged page writes and the compact records.
 *
 * Every page change is WAL-logged: as a record of minidb's resource
 * manager when the library is preloaded (minidb_xlog.c, DELTA records
 * from minidb_wal.c), as generic WAL otherwise (minidb_wal.c).  Replay
 * calls the page functions of minidb_page.h.
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef MINIDB_WAL_H
#define MINIDB_WAL_H

#include "access/heapam.h"

#include "minidb_page.h"

/*
 * minidb_wal.c: WAL-logged page writes.  Change the images that
 * minidb_write_page hands out, then minidb_write_finish logs the delta:
 * a DELTA record of minidb's resource manager when the library is
 * preloaded (minidb_custom_wal), a generic WAL record otherwise.
 */
#define MINIDB_WRITE_MAX_PAGES	2	/* table pages per write */

typedef struct MinidbWalState MinidbWalState;

typedef struct MinidbPageWrite
{
	MinidbWalState *state;
} MinidbPageWrite;

extern bool minidb_custom_wal;
extern void minidb_write_begin(MinidbPageWrite *w, Relation rel);
extern Page minidb_write_page(MinidbPageWrite *w, Buffer buffer, bool is_new);
extern XLogRecPtr minidb_write_finish(MinidbPageWrite *w);
extern bool minidb_write_image_of(const void *ptr, Buffer *buffer,
								  Page *image);
extern void minidb_write_forget(void);
extern void minidb_wal_set_visible(Relation rel, Buffer buffer,
								   Buffer vmbuffer, uint8 flags);

/*
 * minidb_xlog.c: the compact records and the resource manager (preloaded
 * library); their formats are in minidb_xlog.h.
 */
extern void minidb_xlog_init(void);
extern ItemPointerData minidb_log_move(Relation rel, Buffer oldbuf,
									   OffsetNumber off, const bool *keep,
									   int nversions, TransactionId conflict,
									   const MinidbVersionData *marker,
									   int format, Buffer newbuf,
									   bool new_page, const char *newrec,
									   uint32 newlen);
extern OffsetNumber minidb_log_insert(Relation rel, Buffer buffer,
									  bool is_new, const char *rec,
									  uint32 len,
									  const MinidbVersionData *v);
extern void minidb_log_prepend(Relation rel, Buffer buffer, OffsetNumber off,
							   const bool *keep, int nversions,
							   const MinidbWritePlan *wp,
							   const MinidbVersionData *v, int format,
							   const MinidbRecordEnd *extra);
extern void minidb_log_prepend_built(Relation rel, Buffer buffer,
									 OffsetNumber off, const bool *keep,
									 int nversions,
									 const MinidbWritePlan *wp,
									 const MinidbVersionData *v, int format,
									 const MinidbRecordEnd *extra,
									 char *rec, uint32 reclen);
extern void minidb_log_lockers(Relation rel, Buffer buffer, OffsetNumber off,
							   const MinidbLockers *lk);
extern void minidb_log_plan(Relation rel, Buffer buffer,
							const MinidbPagePlan *plan);
extern void minidb_log_visible(Relation rel, Buffer buffer, Buffer vmbuffer,
							   TransactionId cutoff_xid, uint8 flags);

#endif							/* MINIDB_WAL_H */
