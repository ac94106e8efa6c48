/*-------------------------------------------------------------------------
 *
 * btree_view.h
 *	  The page-view layer: a record's bytes seen in place, under the lock.
 *
 * A record's bytes are seen only inside a callback that runs while the
 * buffer is pinned and content-locked.  Nothing may keep a pointer into the
 * page after the callback returns.
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef BTREE_VIEW_H
#define BTREE_VIEW_H

#include "minidb_page.h"

typedef void (*MinidbViewFn) (char *rec, uint32 len, Buffer buffer,
							  void *arg);

typedef enum MinidbViewStatus
{
	MINIDB_VIEW_OK,
	MINIDB_VIEW_NO_BLOCK,		/* block past the end of the relation */
	MINIDB_VIEW_NO_ITEM,		/* offset out of range, unused or dead */
} MinidbViewStatus;

extern MinidbViewStatus minidb_view_record(Relation rel, ItemPointer tid,
										   Buffer *pin, MinidbViewFn fn,
										   void *arg);
extern char *minidb_copy_record(Relation rel, ItemPointer tid, Buffer *pin,
								MemoryContext cxt, uint32 *len,
								MinidbViewStatus *status);

/* The read paths that the benchmark compares */
typedef enum MinidbReadPath
{
	MINIDB_PATH_COPY_EAGER,		/* copy the record, decode everything */
	MINIDB_PATH_COPY_LAZY,		/* copy the record, fast walker */
	MINIDB_PATH_VIEW_LAZY,		/* view in place, fast walker (production) */
} MinidbReadPath;

extern int	minidb_read_path;	/* GUC minidb.read_path */

#endif							/* BTREE_VIEW_H */
