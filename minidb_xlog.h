/*-------------------------------------------------------------------------
 *
 * minidb_xlog.h
 *	  The WAL records of minidb's resource manager ("minidb").
 *
 * With the library in shared_preload_libraries every change to a minidb
 * page is one of these records (minidb_xlog.c makes the compact ones,
 * minidb_wal.c the DELTA records); without it, minidb_wal.c writes generic
 * WAL records (RM_GENERIC_ID) instead and none of these exist.
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef MINIDB_XLOG_H
#define MINIDB_XLOG_H

#include "access/xlog_internal.h"
#include "access/xlogreader.h"

#include "pg_compat.h"

#define MINIDB_RMGR_ID			RM_EXPERIMENTAL_ID

/* Record types (the high four bits of xl_info) */
#define XLOG_MINIDB_PREPEND		0x10	/* a version prepended in place */
#define XLOG_MINIDB_MOVE		0x20	/* a moving UPDATE */
#define XLOG_MINIDB_HORIZON		0x30	/* replayed, no longer written */
#define XLOG_MINIDB_PRUNE		0x40	/* a MinidbPagePlan: prune, freeze, ... */
#define XLOG_MINIDB_DELTA		0x50	/* page deltas, generic WAL's format */
#define XLOG_MINIDB_VISIBLE		0x60	/* page all-visible (and frozen) */
#define XLOG_MINIDB_LOCK		0x70	/* a record's row lockers set */
#define XLOG_MINIDB_INSERT		0x80	/* a new record of one version */
#define XLOG_MINIDB_LOGICAL		0x90	/* row changes, for logical decoding */

/* xl_minidb_prepend.flags */
#define XLMD_PRUNED				0x01	/* keep[] follows in the block data */
#define XLMD_HAS_SUCCESSOR		0x02
#define XLMD_VM_CLEARED			0x04
#define XLMD_DATA_DIFF			0x08	/* the version's data is logged as a
										 * difference from the head's */
#define XLMD_TO_V3				0x10	/* the record is written in format V3
										 * (else in its own) */
#define XLMD_XMIN				0x20	/* compact: the version's xmin is
										 * logged (else it is the record's
										 * xid) */
#define XLMD_HORIZON			0x40	/* a conflict horizon follows the
										 * record's fixed part */
#define XLMD_COMPACT			0x80	/* PREPEND in the compact layout */

/*
 * xl_minidb_prepend.recflags: MINIDB_REC_MOVED_PART, and for a data
 * version XLMD_REC_DROP_LOCKERS, the record's lock-only xmax goes (its
 * lockers all ended: MinidbRecordEnd.drop_lockers)
 */
#define XLMD_REC_DROP_LOCKERS	0x80

/*
 * PREPEND: block 0 data is [bool keep[nversions]] then the new version's
 * bytes; with XLMD_DATA_DIFF its header and null bitmap (vh_hoff bytes),
 * uint16 prefix and suffix lengths, and the data between them (the rest
 * is the record's head's, on the page).  With XLMD_HORIZON the main data ends with the TransactionId
 * whose commit made the pruned versions invisible to every snapshot.
 */
typedef struct xl_minidb_prepend
{
	OffsetNumber offnum;		/* the record */
	uint16		nversions;		/* versions before pruning (keep[] size) */
	uint8		flags;			/* XLMD_* */
	uint8		recflags;		/* record flags to set, see above */
	ItemPointerData successor;	/* with XLMD_HAS_SUCCESSOR */
} xl_minidb_prepend;

/*
 * The compact PREPEND (XLMD_COMPACT, written since the WAL measurements of
 * issue 15; the layout above is still replayed): the main data is the
 * first SizeOfMinidbPrependCompact bytes of xl_minidb_prepend, then the
 * successor only with XLMD_HAS_SUCCESSOR, the horizon with XLMD_HORIZON,
 * the version's xmin with XLMD_XMIN; block 0 data is keep[] and the
 * version as an xl_minidb_cversion.
 */
#define SizeOfMinidbPrependCompact	offsetof(xl_minidb_prepend, successor)

/*
 * A version, compactly (PREPEND with XLMD_COMPACT, INSERT): its flags,
 * attribute count and command id, then its null bitmap (with
 * MINIDB_V_HASNULL), then its data -- all of it, to the end of the block
 * data, or with XLMD_DATA_DIFF uint16 prefix and suffix lengths and the
 * data between them.  Its xmin is the WAL record's xid unless the record
 * logs it; the header's length and data offset follow from the rest, as
 * chain.c builds them (canonical_hoff).
 */
typedef struct xl_minidb_cversion
{
	uint16		flags;
	uint16		natts;
	CommandId	cid;
} xl_minidb_cversion;

#define SizeOfMinidbCversion	(offsetof(xl_minidb_cversion, cid) + sizeof(CommandId))

/*
 * INSERT: a new record holding one version (INSERT, and the speculative
 * insertion of INSERT ... ON CONFLICT), added at offnum of block 0; block
 * 0 data is the version as an xl_minidb_cversion.  The record header is
 * the one minidb_record_build_as gives in the logged format, with the
 * speculative token (XLMI_SPECULATIVE, a uint32 after the fixed part) as
 * its successor; then the xmin with XLMI_XMIN.  Heap's XLOG_HEAP_INSERT
 * logs its tuple alike, without the tuple header.
 */
#define XLMI_INIT_PAGE			0x01
#define XLMI_VM_CLEARED			0x02
#define XLMI_SPECULATIVE		0x04
#define XLMI_XMIN				0x08

typedef struct xl_minidb_insert
{
	OffsetNumber offnum;
	uint8		flags;			/* XLMI_* */
	uint8		format;			/* the record's rh_format */
} xl_minidb_insert;

#define SizeOfMinidbInsert	(offsetof(xl_minidb_insert, format) + sizeof(uint8))

/* xl_minidb_move.flags */
#define XLMD_SAME_PAGE			0x08
#define XLMD_INIT_NEW_PAGE		0x10
#define XLMD_NEW_VM_CLEARED		0x20

/*
 * MOVE: the row's new record is added (on block 1, or on block 0 itself
 * with XLMD_SAME_PAGE) and the old record on block 0 gets a "moved" marker
 * pointing at it.  Block 0 data as for PREPEND (the marker is the
 * version), followed by the new record's bytes when on the same page;
 * block 1 data is the new record's bytes.  The horizon, if any, follows
 * the fixed part as for PREPEND (flag in old.flags).
 */
typedef struct xl_minidb_move
{
	xl_minidb_prepend old;		/* the marker on the old record */
	OffsetNumber newoff;		/* where the new record went */
	uint8		flags;			/* XLMD_SAME_PAGE etc. */
} xl_minidb_move;

/*
 * LOCK: the row lockers of the record at offnum become locker/lockmode
 * (minidb_record_set_lockers; an aborted end of the row goes).  With
 * XLMD_VM_CLEARED the page's all-frozen bit was cleared.
 */
#define XLMD_LOCK_MULTI			0x01	/* locker is a MultiXactId */
#define XLMD_LOCK_WITH_UPDATER	0x02	/* ... that also holds the row's ender */

typedef struct xl_minidb_lock
{
	OffsetNumber offnum;
	uint16		lockmode;		/* MINIDB_LOCK_* */
	TransactionId locker;		/* InvalidTransactionId: none */
	uint8		flags;			/* XLMD_LOCK_MULTI, XLMD_VM_CLEARED */
} xl_minidb_lock;

#define SizeOfMinidbLock	(offsetof(xl_minidb_lock, flags) + sizeof(uint8))

/* HORIZON (older builds wrote it before removing versions) */
typedef struct xl_minidb_horizon
{
	RelFileLocator node;
	TransactionId latest_removed;
} xl_minidb_horizon;

/*
 * PRUNE: a MinidbPagePlan (minidb_page.h) for block 0.  Block data: for
 * each record an xl_minidb_rplan, then the actions of all records' versions
 * (one byte each, MINIDB_PLAN_*), then ndead and nunused offsets, then for
 * each record with MINIDB_RPLAN_SET_LOCKER or MINIDB_RPLAN_SET_END_XID its
 * new locker or end xid (TransactionId) and lock mode (uint16), in record
 * order.
 */
typedef struct xl_minidb_plan
{
	TransactionId conflict_xid; /* InvalidTransactionId: no conflict */
	TransactionId prune_xid;	/* with MINIDB_PLAN_SET_PRUNE_XID */
	uint16		nrecords;
	uint16		nactions;
	uint16		ndead;
	uint16		nunused;
	uint8		flags;			/* MINIDB_PLAN_SET_PRUNE_XID etc. */
	uint8		vmflags;		/* XLMD_VM_CLEARED */
} xl_minidb_plan;

typedef struct xl_minidb_rplan
{
	OffsetNumber off;
	uint16		nversions;
	uint8		flags;			/* MINIDB_RPLAN_* */
} xl_minidb_rplan;

#define SizeOfMinidbRplan	(offsetof(xl_minidb_rplan, flags) + sizeof(uint8))
#define SizeOfMinidbRplanLocker	(sizeof(TransactionId) + sizeof(uint16))

/*
 * DELTA: the same fragments generic WAL logs (<offset, length, bytes> per
 * block, minidb_wal.c), replayed by minidb_wal_redo_delta and masked by
 * minidb_mask.  vmclear bit i: block i was all-visible, clear its map bits.
 */
typedef struct xl_minidb_delta
{
	uint8		vmclear;
} xl_minidb_delta;

/*
 * VISIBLE: block 0 is the visibility map page, block 1 the table page,
 * as in heap's XLOG_HEAP2_VISIBLE.
 */
typedef struct xl_minidb_visible
{
	TransactionId cutoff_xid;
	uint8		flags;			/* VISIBILITYMAP_* */
} xl_minidb_visible;

/*
 * LOGICAL: the row change of one INSERT (or of one multi_insert call: its
 * rows), UPDATE or DELETE of a table that wal_level = logical logs for
 * decoding (RelationIsLogicallyLogged), in heap's WAL tuple format, for
 * rm_decode only: replay does nothing, the page change is a record of its
 * own, logged before it in the same (sub)transaction.  Main data: this
 * struct, then ntuples times [uint32 len, xl_heap_header, len -
 * SizeOfHeapHeader bytes of null bitmap, padding and data], unaligned.
 * INSERT: the new rows; UPDATE: the old row's replica identity (or whole
 * old row) with XLML_HAS_OLD, then the new row; DELETE: the old row's
 * replica identity (or whole row) with XLML_HAS_OLD, else nothing.
 */
#define XLML_INSERT				1
#define XLML_UPDATE				2
#define XLML_DELETE				3

#define XLML_HAS_OLD			0x01	/* the first tuple is the old row */
#define XLML_CLEAR_TOAST		0x02	/* the last row ends its statement's
										 * TOAST chunks (heap's
										 * XLH_INSERT_LAST_IN_MULTI) */

typedef struct xl_minidb_logical
{
	RelFileLocator node;
	uint16		ntuples;
	uint8		action;			/* XLML_INSERT, ... */
	uint8		flags;			/* XLML_HAS_OLD, XLML_CLEAR_TOAST */
} xl_minidb_logical;

#define SizeOfMinidbLogical	(offsetof(xl_minidb_logical, flags) + sizeof(uint8))

/* minidb_wal.c, for the resource manager's redo */
extern void minidb_wal_redo_delta(XLogReaderState *record);
extern void minidb_redo_clear_vm(XLogReaderState *record, uint8 block_id);

#endif							/* MINIDB_XLOG_H */
