/*-------------------------------------------------------------------------
 *
 * minidb_xlog.c
 *	  A compact WAL record for the hot path: prepending a version.
 *
 * Most of minidb's page changes are logged as generic WAL (minidb_wal.c),
 * which needs nothing from the extension at replay.  Prepending a version
 * in place, the change every non-key UPDATE and every DELETE makes, is the
 * exception worth a record of its own: generic WAL must log every byte the
 * grown record shifted on the page, while replay that re-runs the change
 * needs only the new version's bytes and which old versions were pruned.
 *
 * The record is replayed by this extension's resource manager, which the
 * server can only know about when the library is in
 * shared_preload_libraries (RegisterCustomRmgr).  So: preloaded, minidb
 * writes compact records; not preloaded, it writes generic WAL for these
 * changes too.  A standby of a primary that preloads must preload as well.
 *
 * Primary and replay run the same functions, minidb_prepend_build() and
 * minidb_prepend_place(), on the
 * same page (a page differs between them only in hint bits, which change
 * no offsets), so the two produce the same layout, and later generic WAL
 * deltas, which address bytes by offset, stay valid on the standby.
 *
 * The resource manager ID is RM_EXPERIMENTAL_ID, as PostgreSQL asks of
 * extensions that have not reserved one.
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/visibilitymap.h"
#include "access/transam.h"
#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xloginsert.h"
#include "access/xlogreader.h"
#include "access/xlogutils.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/standby.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "minidb_am.h"

#define MINIDB_RMGR_ID			RM_EXPERIMENTAL_ID

#define XLOG_MINIDB_PREPEND		0x10
#define XLOG_MINIDB_MOVE		0x20
#define XLOG_MINIDB_HORIZON		0x30

/* xl_minidb_prepend.flags */
#define XLMD_PRUNED				0x01	/* keep[] follows in the block data */
#define XLMD_HAS_SUCCESSOR		0x02
#define XLMD_VM_CLEARED			0x04

typedef struct xl_minidb_prepend
{
	OffsetNumber offnum;		/* the record */
	uint16		nversions;		/* versions before pruning (keep[] size) */
	uint8		flags;			/* XLMD_* */
	uint8		recflags;		/* record flags to set */
	ItemPointerData successor;	/* with XLMD_HAS_SUCCESSOR */
} xl_minidb_prepend;

/* block 0 data: [bool keep[nversions]] then the new version's bytes */

/*
 * A non-in-place UPDATE: the row's new record is added (on block 1, or on
 * block 0 itself with XLMD_SAME_PAGE) and the old record on block 0 gets a
 * "moved" marker pointing at it.  Block 0 data as for PREPEND (the marker
 * is the version), followed by the new record's bytes when on the same
 * page; block 1 data is the new record's bytes.
 */
#define XLMD_SAME_PAGE			0x08
#define XLMD_INIT_NEW_PAGE		0x10
#define XLMD_NEW_VM_CLEARED		0x20

typedef struct xl_minidb_move
{
	xl_minidb_prepend old;		/* the marker on the old record */
	OffsetNumber newoff;		/* where the new record went */
	uint8		flags;			/* XLMD_SAME_PAGE etc. */
} xl_minidb_move;

bool		minidb_custom_wal = false;

/*
 * Hot standby: before a WAL record that removes versions (pruning, dead
 * records), a HORIZON record names the newest xid whose commit made them
 * invisible to everyone, so that the standby cancels the queries whose
 * snapshots still need them -- what heap's pruning records carry as
 * snapshotConflictHorizon.  Pruning notes that xid here; the next WAL
 * write of this backend logs it (an extra conflict is harmless, a missing
 * one is not).  Only with the resource manager registered: generic WAL has
 * no place for it (the README asks for hot_standby_feedback then).
 */
typedef struct xl_minidb_horizon
{
	RelFileNode node;
	TransactionId latest_removed;
} xl_minidb_horizon;

static TransactionId removed_horizon = InvalidTransactionId;

void
minidb_note_removed_xid(TransactionId xid)
{
	if (TransactionIdIsNormal(xid) &&
		(!TransactionIdIsValid(removed_horizon) ||
		 TransactionIdFollows(xid, removed_horizon)))
		removed_horizon = xid;
}

void
minidb_log_removed_horizon(Relation rel)
{
	xl_minidb_horizon xlrec;

	if (!TransactionIdIsValid(removed_horizon))
		return;
	if (minidb_custom_wal && RelationNeedsWAL(rel) && XLogStandbyInfoActive())
	{
		xlrec.node = rel->rd_node;
		xlrec.latest_removed = removed_horizon;
		XLogBeginInsert();
		XLogRegisterData((char *) &xlrec, sizeof(xlrec));
		XLogInsert(MINIDB_RMGR_ID, XLOG_MINIDB_HORIZON);
	}
	removed_horizon = InvalidTransactionId;
}

/*
 * The change itself, on primary and in replay alike, in two steps so that
 * the primary allocates nothing inside its critical section.
 *
 * minidb_prepend_build: the record at off pruned to keep[] (if given), with
 * v prepended and the record header's successor field set;
 * palloc'd, its length in *newlen.
 */
char *
minidb_prepend_build(Page page, OffsetNumber off, const bool *keep,
					 const MinidbVersionData *v,
					 const ItemPointerData *successor, uint8 recflags,
					 uint32 *newlen)
{
	ItemId		lp = PageGetItemId(page, off);
	uint32		len = ItemIdGetLength(lp);
	char	   *old = palloc(MAXALIGN(len));
	uint32		newsize;
	char	   *buf;
	MinidbRecordHeader *rh;

	memcpy(old, PageGetItem(page, lp), len);
	if (keep)
		len = minidb_record_prune(old, len, keep);
	newsize = minidb_record_prepend_size(len, v);
	buf = palloc(MAXALIGN(newsize));
	*newlen = minidb_record_prepend(buf, MAXALIGN(newsize), old, len, v);
	/*
	 * The row lockers stay: a lock covers every version of the row, and it
	 * outlives its own transaction's update (and that update's rollback to
	 * a savepoint), as heap keeps a locker beside the updater in a multixact.
	 */
	rh = minidb_record_header(buf);
	rh->rh_flags = (rh->rh_flags & ~MINIDB_REC_MOVED_PART) | recflags;
	if (successor)
		rh->rh_successor = *successor;
	else
		ItemPointerSetInvalid(&rh->rh_successor);
	pfree(old);
	return buf;
}

/*
 * minidb_prepend_place: put the built record in place of the old one; the
 * version it superseded is prunable once xmin is old enough.
 */
void
minidb_prepend_place(Page page, OffsetNumber off, const char *rec,
					 uint32 len, TransactionId xmin)
{
	minidb_page_replace_record(page, off, rec, len);
	PageSetPrunable(page, xmin);
}

/* The bytes a version occupies in a record (palloc'd; free with pfree) */
static char *
version_bytes(const MinidbVersionData *v, uint32 *vlen)
{
	uint32		size;
	char	   *tmp;

	/* a version's bytes do not depend on the record format: build a V1 one */
	*vlen = minidb_version_size(v);
	size = MINIDB_RECORD_HDRSZ + *vlen;
	tmp = palloc(MAXALIGN(size));
	minidb_record_build_as(tmp, MAXALIGN(size), v, MINIDB_FORMAT_V1);
	memmove(tmp, tmp + MINIDB_RECORD_HDRSZ, *vlen);
	return tmp;
}

/*
 * Prepend v to the record at off of an exclusively locked buffer and log
 * it as one compact record (primary side; minidb_custom_wal is set).
 * keep[] is the pruning plan for the record's nversions versions, or NULL.
 */
void
minidb_log_prepend(Relation rel, Buffer buffer, OffsetNumber off,
				   const bool *keep, int nversions,
				   const MinidbVersionData *v,
				   const ItemPointerData *successor, uint8 recflags)
{
	Page		page = BufferGetPage(buffer);
	BlockNumber blkno = BufferGetBlockNumber(buffer);
	Buffer		vmbuffer = InvalidBuffer;
	bool		clear_vm = PageIsAllVisible(page);
	xl_minidb_prepend xlrec;
	char	   *vbytes;
	char	   *rec;
	uint32		reclen;
	uint32		vlen;

	vbytes = version_bytes(v, &vlen);
	if (clear_vm)
		visibilitymap_pin(rel, blkno, &vmbuffer);
	minidb_log_removed_horizon(rel);
	rec = minidb_prepend_build(page, off, keep, v, successor, recflags,
							   &reclen);

	START_CRIT_SECTION();
	minidb_prepend_place(page, off, rec, reclen, v->xmin);
	if (clear_vm)
	{
		PageClearAllVisible(page);
		visibilitymap_clear(rel, blkno, vmbuffer, VISIBILITYMAP_VALID_BITS);
	}
	MarkBufferDirty(buffer);

	if (RelationNeedsWAL(rel))
	{
		XLogRecPtr	recptr;

		xlrec.offnum = off;
		xlrec.nversions = keep ? nversions : 0;
		xlrec.flags = (keep ? XLMD_PRUNED : 0) |
			(successor ? XLMD_HAS_SUCCESSOR : 0) |
			(clear_vm ? XLMD_VM_CLEARED : 0);
		xlrec.recflags = recflags;
		if (successor)
			xlrec.successor = *successor;
		else
			ItemPointerSetInvalid(&xlrec.successor);

		XLogBeginInsert();
		XLogRegisterData((char *) &xlrec, sizeof(xlrec));
		XLogRegisterBuffer(0, buffer, REGBUF_STANDARD);
		if (keep)
			XLogRegisterBufData(0, (char *) keep, nversions * sizeof(bool));
		XLogRegisterBufData(0, vbytes, vlen);
		recptr = XLogInsert(MINIDB_RMGR_ID, XLOG_MINIDB_PREPEND);
		PageSetLSN(page, recptr);
	}
	END_CRIT_SECTION();

	if (BufferIsValid(vmbuffer))
		ReleaseBuffer(vmbuffer);
	pfree(vbytes);
	pfree(rec);
}

/*
 * A moving UPDATE as one compact record: add newrec to newbuf's page
 * (which may be oldbuf's; a new page when new_page), then prepend the
 * "moved" marker to the record at off of oldbuf, pointing at the new
 * record.  Both buffers are exclusively locked and have room (the caller
 * checked).  Returns the new record's TID.
 */
ItemPointerData
minidb_log_move(Relation rel, Buffer oldbuf, OffsetNumber off,
				const bool *keep, int nversions,
				const MinidbVersionData *marker, Buffer newbuf, bool new_page,
				const char *newrec, uint32 newlen)
{
	Page		oldpage = BufferGetPage(oldbuf);
	Page		newpage = BufferGetPage(newbuf);
	bool		same = (newbuf == oldbuf);
	Buffer		vmold = InvalidBuffer;
	Buffer		vmnew = InvalidBuffer;
	bool		clear_old = PageIsAllVisible(oldpage);
	bool		clear_new = !same && !new_page && PageIsAllVisible(newpage);
	ItemPointerData newtid;
	ItemPointerData placeholder;
	char	   *vbytes;
	uint32		vlen;
	char	   *rec;
	uint32		reclen;

	vbytes = version_bytes(marker, &vlen);
	if (clear_old)
		visibilitymap_pin(rel, BufferGetBlockNumber(oldbuf), &vmold);
	if (clear_new)
		visibilitymap_pin(rel, BufferGetBlockNumber(newbuf), &vmnew);
	minidb_log_removed_horizon(rel);
	ItemPointerSet(&placeholder, BufferGetBlockNumber(newbuf), FirstOffsetNumber);
	rec = minidb_prepend_build(oldpage, off, keep, marker, &placeholder, 0,
							   &reclen);

	START_CRIT_SECTION();
	if (new_page)
		minidb_page_init(newpage);
	ItemPointerSet(&newtid, BufferGetBlockNumber(newbuf),
				   minidb_page_add_record(newpage, newrec, newlen));
	minidb_record_header(rec)->rh_successor = newtid;
	minidb_prepend_place(oldpage, off, rec, reclen, marker->xmin);
	if (clear_old)
	{
		PageClearAllVisible(oldpage);
		visibilitymap_clear(rel, BufferGetBlockNumber(oldbuf), vmold,
							VISIBILITYMAP_VALID_BITS);
	}
	if (clear_new)
	{
		PageClearAllVisible(newpage);
		visibilitymap_clear(rel, BufferGetBlockNumber(newbuf), vmnew,
							VISIBILITYMAP_VALID_BITS);
	}
	MarkBufferDirty(oldbuf);
	if (!same)
		MarkBufferDirty(newbuf);

	if (RelationNeedsWAL(rel))
	{
		xl_minidb_move xlrec;
		XLogRecPtr	recptr;

		xlrec.old.offnum = off;
		xlrec.old.nversions = keep ? nversions : 0;
		xlrec.old.flags = (keep ? XLMD_PRUNED : 0) | XLMD_HAS_SUCCESSOR |
			(clear_old ? XLMD_VM_CLEARED : 0);
		xlrec.old.recflags = 0;
		xlrec.old.successor = newtid;
		xlrec.newoff = ItemPointerGetOffsetNumber(&newtid);
		xlrec.flags = (same ? XLMD_SAME_PAGE : 0) |
			(new_page ? XLMD_INIT_NEW_PAGE : 0) |
			(clear_new ? XLMD_NEW_VM_CLEARED : 0);

		XLogBeginInsert();
		XLogRegisterData((char *) &xlrec, sizeof(xlrec));
		XLogRegisterBuffer(0, oldbuf, REGBUF_STANDARD);
		if (keep)
			XLogRegisterBufData(0, (char *) keep, nversions * sizeof(bool));
		XLogRegisterBufData(0, vbytes, vlen);
		if (same)
			XLogRegisterBufData(0, (char *) newrec, newlen);
		else
		{
			XLogRegisterBuffer(1, newbuf, REGBUF_STANDARD |
							   (new_page ? REGBUF_WILL_INIT : 0));
			XLogRegisterBufData(1, (char *) newrec, newlen);
		}
		recptr = XLogInsert(MINIDB_RMGR_ID, XLOG_MINIDB_MOVE);
		PageSetLSN(oldpage, recptr);
		if (!same)
			PageSetLSN(newpage, recptr);
	}
	END_CRIT_SECTION();

	if (BufferIsValid(vmold))
		ReleaseBuffer(vmold);
	if (BufferIsValid(vmnew))
		ReleaseBuffer(vmnew);
	pfree(vbytes);
	pfree(rec);
	return newtid;
}

/* ----------------------------------------------------------------
 * Replay
 * ----------------------------------------------------------------
 */

/* Read a logged version's bytes back into a MinidbVersionData */
static void
parse_version(const char *bytes, MinidbVersionData *v)
{
	const MinidbVersionHeader *vh = (const MinidbVersionHeader *) bytes;

	v->xmin = vh->vh_xmin;
	v->cid = vh->vh_cid;
	v->flags = vh->vh_flags;
	v->natts = vh->vh_natts;
	v->bitmap = (vh->vh_flags & MINIDB_V_HASNULL) ?
		(const bits8 *) (bytes + MINIDB_VERSION_HDRSZ) : NULL;
	v->data = bytes + vh->vh_hoff;
	v->datalen = vh->vh_len - vh->vh_hoff;
}

/* Add a logged record to a page at the offset the primary used */
static void
redo_add_record(Page page, OffsetNumber off, const char *data, Size len)
{
	char	   *rec = palloc(MAXALIGN(len));

	memcpy(rec, data, len);
	if (PageAddItem(page, (Item) rec, len, off, true, true) != off)
		elog(PANIC, "minidb_redo: failed to add record at offset %u", off);
	pfree(rec);
}

/* Block 0 of PREPEND and MOVE: prune, prepend; returns bytes consumed */
static Size
redo_prepend_block(Page page, const xl_minidb_prepend *xlprep,
				   const char *data, Size datalen)
{
	Size		keeplen = (xlprep->flags & XLMD_PRUNED) ?
		xlprep->nversions * sizeof(bool) : 0;
	bool	   *keep = NULL;
	MinidbVersionHeader vh;
	char	   *vbytes;
	char	   *rec;
	uint32		reclen;
	MinidbVersionData v;

	if (keeplen)
	{
		keep = palloc(keeplen);
		memcpy(keep, data, keeplen);
	}
	memcpy(&vh, data + keeplen, sizeof(vh));
	if (keeplen + vh.vh_len > datalen)
		elog(PANIC, "minidb_redo: version of %u bytes overruns the record data",
			 vh.vh_len);
	vbytes = palloc(MAXALIGN(vh.vh_len));	/* aligned copy */
	memcpy(vbytes, data + keeplen, vh.vh_len);
	parse_version(vbytes, &v);
	rec = minidb_prepend_build(page, xlprep->offnum, keep, &v,
							   (xlprep->flags & XLMD_HAS_SUCCESSOR) ?
							   &xlprep->successor : NULL,
							   xlprep->recflags, &reclen);
	minidb_prepend_place(page, xlprep->offnum, rec, reclen, v.xmin);
	if (xlprep->flags & XLMD_VM_CLEARED)
		PageClearAllVisible(page);
	pfree(rec);
	pfree(vbytes);
	if (keep)
		pfree(keep);
	return keeplen + vh.vh_len;
}

static void
clear_vm_block(XLogReaderState *record, uint8 block_id)
{
	RelFileNode rnode;
	BlockNumber blkno;
	Relation	reln;
	Buffer		vmbuffer = InvalidBuffer;

	XLogRecGetBlockTag(record, block_id, &rnode, NULL, &blkno);
	reln = CreateFakeRelcacheEntry(rnode);
	visibilitymap_pin(reln, blkno, &vmbuffer);
	visibilitymap_clear(reln, blkno, vmbuffer, VISIBILITYMAP_VALID_BITS);
	ReleaseBuffer(vmbuffer);
	FreeFakeRelcacheEntry(reln);
}

static void
redo_move(XLogReaderState *record)
{
	xl_minidb_move *xlrec = (xl_minidb_move *) XLogRecGetData(record);
	XLogRecPtr	lsn = record->EndRecPtr;
	bool		same = (xlrec->flags & XLMD_SAME_PAGE) != 0;
	Buffer		oldbuf;
	Buffer		newbuf = InvalidBuffer;

	if (xlrec->old.flags & XLMD_VM_CLEARED)
		clear_vm_block(record, 0);
	if (xlrec->flags & XLMD_NEW_VM_CLEARED)
		clear_vm_block(record, 1);

	/* the new record first, as on the primary */
	if (!same)
	{
		XLogRedoAction action;

		if (xlrec->flags & XLMD_INIT_NEW_PAGE)
		{
			newbuf = XLogInitBufferForRedo(record, 1);
			minidb_page_init(BufferGetPage(newbuf));
			action = BLK_NEEDS_REDO;
		}
		else
			action = XLogReadBufferForRedo(record, 1, &newbuf);
		if (action == BLK_NEEDS_REDO)
		{
			Page		page = BufferGetPage(newbuf);
			Size		len;
			char	   *data = XLogRecGetBlockData(record, 1, &len);

			redo_add_record(page, xlrec->newoff, data, len);
			if (xlrec->flags & XLMD_NEW_VM_CLEARED)
				PageClearAllVisible(page);
			PageSetLSN(page, lsn);
			MarkBufferDirty(newbuf);
		}
	}

	if (XLogReadBufferForRedo(record, 0, &oldbuf) == BLK_NEEDS_REDO)
	{
		Page		page = BufferGetPage(oldbuf);
		Size		datalen;
		char	   *data = XLogRecGetBlockData(record, 0, &datalen);
		xl_minidb_prepend xlprep = xlrec->old;

		if (same)
		{
			/* block 0 data: keep[], the marker (no data), the new record */
			Size		used = MINIDB_VERSION_HDRSZ +
				((xlprep.flags & XLMD_PRUNED) ?
				 xlprep.nversions * sizeof(bool) : 0);

			redo_add_record(page, xlrec->newoff, data + used, datalen - used);
		}
		redo_prepend_block(page, &xlprep, data, datalen);
		PageSetLSN(page, lsn);
		MarkBufferDirty(oldbuf);
	}
	if (BufferIsValid(oldbuf))
		UnlockReleaseBuffer(oldbuf);
	if (BufferIsValid(newbuf))
		UnlockReleaseBuffer(newbuf);
}

static void
redo_prepend(XLogReaderState *record)
{
	xl_minidb_prepend *xlrec = (xl_minidb_prepend *) XLogRecGetData(record);
	Buffer		buffer;

	if (xlrec->flags & XLMD_VM_CLEARED)
		clear_vm_block(record, 0);
	if (XLogReadBufferForRedo(record, 0, &buffer) == BLK_NEEDS_REDO)
	{
		Page		page = BufferGetPage(buffer);
		Size		datalen;
		char	   *data = XLogRecGetBlockData(record, 0, &datalen);

		redo_prepend_block(page, xlrec, data, datalen);
		PageSetLSN(page, record->EndRecPtr);
		MarkBufferDirty(buffer);
	}
	if (BufferIsValid(buffer))
		UnlockReleaseBuffer(buffer);
}

static void
minidb_redo(XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;

	switch (info)
	{
		case XLOG_MINIDB_PREPEND:
			redo_prepend(record);
			break;
		case XLOG_MINIDB_MOVE:
			redo_move(record);
			break;
		case XLOG_MINIDB_HORIZON:
			{
				xl_minidb_horizon *xlrec = (xl_minidb_horizon *) XLogRecGetData(record);

				if (InHotStandby)
					ResolveRecoveryConflictWithSnapshot(xlrec->latest_removed,
														xlrec->node);
			}
			break;
		default:
			elog(PANIC, "minidb_redo: unknown op code %u", info);
	}
}

static void
minidb_desc(StringInfo buf, XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;

	if (info == XLOG_MINIDB_PREPEND)
	{
		xl_minidb_prepend *xlrec = (xl_minidb_prepend *) XLogRecGetData(record);

		appendStringInfo(buf, "off %u, flags 0x%02X, pruned from %u versions",
						 xlrec->offnum, xlrec->flags, xlrec->nversions);
	}
	else if (info == XLOG_MINIDB_HORIZON)
	{
		xl_minidb_horizon *xlrec = (xl_minidb_horizon *) XLogRecGetData(record);

		appendStringInfo(buf, "rel %u/%u/%u, latest removed xid %u",
						 xlrec->node.spcNode, xlrec->node.dbNode,
						 xlrec->node.relNode, xlrec->latest_removed);
	}
	else if (info == XLOG_MINIDB_MOVE)
	{
		xl_minidb_move *xlrec = (xl_minidb_move *) XLogRecGetData(record);

		appendStringInfo(buf, "off %u -> (%u,%u), flags 0x%02X/0x%02X",
						 xlrec->old.offnum,
						 ItemPointerGetBlockNumberNoCheck(&xlrec->old.successor),
						 xlrec->newoff, xlrec->old.flags, xlrec->flags);
	}
}

static const char *
minidb_identify(uint8 info)
{
	switch (info & ~XLR_INFO_MASK)
	{
		case XLOG_MINIDB_PREPEND:
			return "PREPEND";
		case XLOG_MINIDB_MOVE:
			return "MOVE";
		case XLOG_MINIDB_HORIZON:
			return "HORIZON";
	}
	return NULL;
}

static RmgrData minidb_rmgr = {
	.rm_name = "minidb",
	.rm_redo = minidb_redo,
	.rm_desc = minidb_desc,
	.rm_identify = minidb_identify,
};

/* From _PG_init: register the resource manager if we are being preloaded */
void
minidb_xlog_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;
	RegisterCustomRmgr(MINIDB_RMGR_ID, &minidb_rmgr);
	minidb_custom_wal = true;
}
