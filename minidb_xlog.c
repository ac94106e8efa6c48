/*-------------------------------------------------------------------------
 *
 * minidb_xlog.c
 *	  minidb's resource manager: compact WAL records, their replay, masks.
 *
 * With the library in shared_preload_libraries, minidb registers a custom
 * resource manager ("minidb", RM_EXPERIMENTAL_ID as PostgreSQL asks of
 * extensions that have not reserved one) and every change to a minidb page
 * is one of its records:
 *
 *	INSERT	 a new record of one version (INSERT, a speculative insertion),
 *			 the version without its header, as heap logs a tuple;
 *	PREPEND	 a version prepended in place (non-key UPDATE, DELETE), with the
 *			 record's pruning plan (keep[]);
 *	MOVE	 a moving UPDATE: the new record plus the old record's "moved"
 *			 marker;
 *	PRUNE	 a MinidbPagePlan: opportunistic pruning, and everything VACUUM
 *			 does to a page (prune, freeze, forget lockers, dead records);
 *	VISIBLE	 the page all-visible (and all-frozen) in the visibility map;
 *	DELTA	 any other change (COPY's pages, row lock, ...), as the byte
 *			 delta that generic WAL would log (minidb_wal.c);
 *	LOGICAL	 with wal_level = logical, a row change for logical decoding:
 *			 replay ignores it, rm_decode (minidb_logical.c) decodes it.
 *
 * Replay of the first four runs the functions the primary ran, on the
 * standby's own page: minidb_record_build_as, minidb_prepend_build/place
 * and minidb_page_execute_plan.  Every change that moves records on a page is
 * one of those, never a byte delta: hint bits are set without WAL, so the
 * standby's bytes differ from the primary's in hint bits, and a delta is
 * only right where nothing moved (see minidb_wal.c).  The three carry the
 * conflict horizon of what they remove or freeze, which a hot standby
 * needs to cancel the queries that still need it (heap's records carry the
 * same); HORIZON, an earlier separate record for that, is still replayed.
 *
 * minidb_mask masks what may differ between primary and replay: LSN and
 * checksum, the page's hint flags and pd_prune_xid, the hole, item padding,
 * and the hint bits (xmin committed/aborted) of every version of every
 * record, which wal_consistency_checking then compares byte for byte.
 *
 * Without preloading, the server cannot replay these records: minidb then
 * logs generic WAL (minidb_wal.c).  A standby of a primary that preloads
 * must preload as well, and one of a primary that does not must not.
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/bufmask.h"
#include "access/transam.h"
#include "access/visibilitymap.h"
#include "access/xlog.h"
#include "access/xloginsert.h"
#include "access/xlogutils.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/freespace.h"
#include "storage/standby.h"
#include "utils/rel.h"

#include "chain.h"
#include "minidb_page.h"
#include "minidb_wal.h"
#include "minidb_xlog.h"
#include "minidb_logical.h"

/* visibilitymap.c's arithmetic (it keeps these macros to itself) */
#define MINIDB_VM_MAPSIZE (BLCKSZ - MAXALIGN(SizeOfPageHeaderData))
#define MINIDB_VM_BLOCKS_PER_BYTE (BITS_PER_BYTE / BITS_PER_HEAPBLOCK)
#define MINIDB_VM_BLOCKS_PER_PAGE (MINIDB_VM_MAPSIZE * MINIDB_VM_BLOCKS_PER_BYTE)
#define MINIDB_VM_MAPBYTE(x) (((x) % MINIDB_VM_BLOCKS_PER_PAGE) / MINIDB_VM_BLOCKS_PER_BYTE)
#define MINIDB_VM_OFFSET(x) (((x) % MINIDB_VM_BLOCKS_PER_BYTE) * BITS_PER_HEAPBLOCK)

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
 * The data of the version a record at off starts with (its head, version
 * 0), if it is a data version whose bytes can be read; for a prepend's
 * prefix/suffix compression, on the primary and in replay alike.
 */
static bool
head_data(Page page, OffsetNumber off, const char **data, uint32 *len)
{
	char	   *rec;
	uint32		reclen;
	MinidbChainIter it;
	MinidbVersionRef ref;
	MinidbChainError err;
	bool		damaged = false;
	const char *why;

	if (minidb_page_item(page, off, &rec, &reclen, &why) != MINIDB_ITEM_RECORD ||
		!minidb_chain_iter_init(&it, rec, reclen, &err) ||
		!minidb_chain_iter_next(&it, &ref, &err, &damaged) ||
		(ref.vh->vh_flags & MINIDB_V_NODATA_MASK))
		return false;
	/* a record's newest version is whole, in every format */
	*data = rec + ref.dataoff;
	*len = ref.datalen;
	return true;
}

/*
 * Version v as an xl_minidb_cversion (minidb_xlog.h): flags, attribute
 * count, command id, null bitmap, then the data whole or, given affix
 * (prefix and suffix lengths), the lengths and the data between them.
 * palloc'd.
 */
static char *
cversion_bytes(const MinidbVersionData *v, const uint16 *affix, uint32 *len)
{
	xl_minidb_cversion cv;
	uint32		bitmaplen = minidb_version_bitmaplen(v->flags, v->natts);
	uint32		skip = affix ? affix[0] : 0;
	uint32		datalen = v->datalen - (affix ? affix[0] + affix[1] : 0);
	char	   *out = palloc(SizeOfMinidbCversion + bitmaplen +
							 2 * sizeof(uint16) + datalen);
	char	   *p = out;

	cv.flags = v->flags;
	cv.natts = v->natts;
	cv.cid = v->cid;
	memcpy(p, &cv, SizeOfMinidbCversion);
	p += SizeOfMinidbCversion;
	if (bitmaplen > 0)
	{
		memcpy(p, v->bitmap, bitmaplen);
		p += bitmaplen;
	}
	if (affix)
	{
		memcpy(p, affix, 2 * sizeof(uint16));
		p += 2 * sizeof(uint16);
	}
	if (datalen > 0)
		memcpy(p, v->data + skip, datalen);
	p += datalen;
	*len = p - out;
	return out;
}

/*
 * The bytes of a prepend's new version as logged, compactly: whole, or --
 * when the record's head stays and the two share a prefix or a suffix of
 * their data, as an UPDATE of a few columns does -- only the data between
 * them, which replay completes from the head on its page (heap's
 * prefix/suffix compression of XLOG_HEAP_HOT_UPDATE).  old (oldlen
 * bytes) is the head's data as head_data reads it, NULL for none.  Sets
 * *diffed.  palloc'd.
 */
#define MIN_AFFIX_LEN	3		/* heap's threshold, in log_heap_update */

static char *
prepend_bytes(const char *old, uint32 oldlen, const bool *keep,
			  const MinidbVersionData *v, uint32 *vlen, bool *diffed)
{
	uint32		newlen = v->datalen;
	uint32		prefix = 0;
	uint32		suffix = 0;
	uint16		affix[2];

	*diffed = false;
	if ((keep && !keep[0]) || newlen == 0 || old == NULL)
		return cversion_bytes(v, NULL, vlen);
	prefix = minidb_common_prefix(old, v->data,
								  Min(Min(oldlen, newlen), PG_UINT16_MAX));
	suffix = minidb_common_suffix(old + oldlen, v->data + newlen,
								  Min(Min(oldlen, newlen) - prefix,
									  PG_UINT16_MAX));
	if (prefix < MIN_AFFIX_LEN)
		prefix = 0;
	if (suffix < MIN_AFFIX_LEN)
		suffix = 0;
	if (prefix + suffix <= sizeof(affix))
		return cversion_bytes(v, NULL, vlen);

	affix[0] = (uint16) prefix;
	affix[1] = (uint16) suffix;
	*diffed = true;
	return cversion_bytes(v, affix, vlen);
}

/*
 * Prepend v to the record at off of an exclusively locked buffer and log
 * it as one compact record (primary side; minidb_custom_wal is set).
 * keep[] is the pruning plan for the record's nversions versions, or NULL;
 * wp what the plan's walk read for this record (the pruning plan's
 * conflict horizon, which every caller of minidb_prune_plan logs: the
 * floor's xmin when versions below the floor go; none when only aborted
 * versions go) and the head's data for the prefix/suffix compression.
 */
void
minidb_log_prepend(Relation rel, Buffer buffer, OffsetNumber off,
				   const bool *keep, int nversions, const MinidbWritePlan *wp,
				   const MinidbVersionData *v, int format,
				   const MinidbRecordEnd *extra)
{
	uint32		reclen;
	char	   *rec = minidb_prepend_build(BufferGetPage(buffer), off, keep, v,
										   format, extra, &reclen);

	minidb_log_prepend_built(rel, buffer, off, keep, nversions, wp, v, format,
							 extra, rec, reclen);
}

/*
 * The same, with the new record already built from the page as it is
 * (minidb_prepend_build with these arguments: rec, reclen bytes, which
 * this takes over and frees), for a writer that sized the write by
 * building it.
 */
void
minidb_log_prepend_built(Relation rel, Buffer buffer, OffsetNumber off,
						 const bool *keep, int nversions,
						 const MinidbWritePlan *wp,
						 const MinidbVersionData *v, int format,
						 const MinidbRecordEnd *extra, char *rec,
						 uint32 reclen)
{
	Page		page = BufferGetPage(buffer);
	BlockNumber blkno = BufferGetBlockNumber(buffer);
	Buffer		vmbuffer = InvalidBuffer;
	bool		clear_vm = PageIsAllVisible(page);
	TransactionId horizon = keep ? wp->conflict : InvalidTransactionId;
	TransactionId xmin = v->xmin;
	xl_minidb_prepend xlrec;
	char	   *vbytes;
	uint32		vlen;
	bool		diffed;
	const ItemPointerData *successor = extra ? extra->successor : NULL;

	minidb_page_ensure_room(rel, buffer, off, reclen, 0);
	vbytes = prepend_bytes(wp->head, wp->headlen, keep, v, &vlen, &diffed);
	if (clear_vm)
		visibilitymap_pin(rel, blkno, &vmbuffer);

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
		xlrec.flags = XLMD_COMPACT | (keep ? XLMD_PRUNED : 0) |
			(successor ? XLMD_HAS_SUCCESSOR : 0) |
			(clear_vm ? XLMD_VM_CLEARED : 0) |
			(diffed ? XLMD_DATA_DIFF : 0) |
			(format == MINIDB_FORMAT_V3 ? XLMD_TO_V3 : 0) |
			(TransactionIdIsValid(horizon) ? XLMD_HORIZON : 0) |
			(xmin != GetCurrentTransactionIdIfAny() ? XLMD_XMIN : 0);
		xlrec.recflags = ((extra && extra->moved_part) ? MINIDB_REC_MOVED_PART : 0) |
			((extra && extra->drop_lockers) ? XLMD_REC_DROP_LOCKERS : 0);
		if (successor)
			xlrec.successor = *successor;

		/* the compact layout: the successor, horizon and xmin if any */
		XLogBeginInsert();
		XLogRegisterData((char *) &xlrec, SizeOfMinidbPrependCompact);
		if (successor)
			XLogRegisterData((char *) &xlrec.successor,
							 sizeof(ItemPointerData));
		if (TransactionIdIsValid(horizon))
			XLogRegisterData((char *) &horizon, sizeof(horizon));
		if (xlrec.flags & XLMD_XMIN)
			XLogRegisterData((char *) &xmin, sizeof(xmin));
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
 * Add rec (len bytes, a record minidb_record_build made: one version, no
 * locker, a speculative token at most) to an exclusively locked buffer
 * that has room for it, and log it as one INSERT record: the version
 * compactly, as heap logs a tuple without its header.  v is the version
 * rec was built from (minidb_record_build_ex in rec's format, with its
 * token for a speculative insertion): what replay rebuilds rec from, so it
 * is logged as given, without reading it back off rec.  A new page
 * (is_new, or a page left all-zero) is initialized here.  Returns the
 * offset.
 */
OffsetNumber
minidb_log_insert(Relation rel, Buffer buffer, bool is_new, const char *rec,
				  uint32 len, const MinidbVersionData *v)
{
	Page		page = BufferGetPage(buffer);
	BlockNumber blkno = BufferGetBlockNumber(buffer);
	bool		init = is_new || PageIsNew(page);
	bool		clear_vm = !init && PageIsAllVisible(page);
	int			format = minidb_record_format_of(rec);
	uint32		token = minidb_record_spec_token(rec);
	bool		spec = (token != 0);
	Buffer		vmbuffer = InvalidBuffer;
	char	   *vbytes;
	uint32		vlen;
	OffsetNumber off;

#if defined(USE_ASSERT_CHECKING) || defined(MINIDB_CHECK_FAST_PATH)

	/*
	 * Replay rebuilds the record from its version, its format and the
	 * token (redo_insert): it must be what that build gives -- one data
	 * version, no lockers, no end, no successor -- and v what the record
	 * holds.
	 */
	{
		MinidbLockers lk;
		ItemPointerData succ;
		bool		moved_part;
		MinidbChainIter it;
		MinidbVersionRef ref;
		MinidbChainError err;
		bool		damaged = false;
		MinidbRecordEnd extra;
		ItemPointerData tokentid;
		char	   *again = palloc(MAXALIGN(len));

		minidb_record_get_lockers(rec, &lk);
		if (format == 0 || minidb_record_nversions(rec, len) != 1 ||
			TransactionIdIsValid(lk.xid) || minidb_record_has_end(rec) ||
			minidb_record_get_successor(rec, &succ, &moved_part) || moved_part ||
			!minidb_chain_iter_init(&it, (char *) rec, len, &err) ||
			!minidb_chain_iter_next(&it, &ref, &err, &damaged) ||
			(ref.vh->vh_flags & (MINIDB_V_NODATA_MASK | MINIDB_V_VIRTUAL)))
			elog(ERROR, "minidb_log_insert: not a new record");
		memset(&extra, 0, sizeof(extra));
		if (spec)
		{
			ItemPointerSet(&tokentid, token, SpecTokenOffsetNumber);
			extra.successor = &tokentid;
			extra.spec = true;
		}
		if (minidb_record_build_ex(again, MAXALIGN(len), v, format,
								   &extra) != len ||
			memcmp(again, rec, len) != 0)
			elog(ERROR, "minidb_log_insert: the record is not its version's");
		pfree(again);
		/* ... and logs what reading the version back would log */
		{
			MinidbVersionData parsed;
			char	   *given;
			char	   *read;
			uint32		givenlen;
			uint32		readlen;

			minidb_version_get(rec, &ref, &parsed);
			given = cversion_bytes(v, NULL, &givenlen);
			read = cversion_bytes(&parsed, NULL, &readlen);
			if (givenlen != readlen || memcmp(given, read, givenlen) != 0 ||
				parsed.xmin != v->xmin)
				elog(ERROR, "minidb_log_insert: the version given is not the record's");
			pfree(given);
			pfree(read);
		}
	}
#endif
	vbytes = cversion_bytes(v, NULL, &vlen);
	if (clear_vm)
		visibilitymap_pin(rel, blkno, &vmbuffer);

	START_CRIT_SECTION();
	if (init)
		minidb_page_init(page);
	off = minidb_page_add_record(page, rec, len);
	if (clear_vm)
	{
		PageClearAllVisible(page);
		visibilitymap_clear(rel, blkno, vmbuffer, VISIBILITYMAP_VALID_BITS);
	}
	MarkBufferDirty(buffer);

	if (RelationNeedsWAL(rel))
	{
		xl_minidb_insert xlrec;
		XLogRecPtr	recptr;

		xlrec.offnum = off;
		xlrec.format = (uint8) format;
		xlrec.flags = (init ? XLMI_INIT_PAGE : 0) |
			(clear_vm ? XLMI_VM_CLEARED : 0) |
			(spec ? XLMI_SPECULATIVE : 0) |
			(v->xmin != GetCurrentTransactionIdIfAny() ? XLMI_XMIN : 0);
		XLogBeginInsert();
		XLogRegisterData((char *) &xlrec, SizeOfMinidbInsert);
		if (spec)
			XLogRegisterData((char *) &token, sizeof(token));
		if (xlrec.flags & XLMI_XMIN)
			XLogRegisterData((char *) &v->xmin, sizeof(TransactionId));
		XLogRegisterBuffer(0, buffer, REGBUF_STANDARD |
						   (init ? REGBUF_WILL_INIT : 0));
		XLogRegisterBufData(0, vbytes, vlen);
		recptr = XLogInsert(MINIDB_RMGR_ID, XLOG_MINIDB_INSERT);
		PageSetLSN(page, recptr);
	}
	END_CRIT_SECTION();

	if (BufferIsValid(vmbuffer))
		ReleaseBuffer(vmbuffer);
	pfree(vbytes);
	return off;
}

/*
 * A moving UPDATE as one compact record: add newrec to newbuf's page
 * (which may be oldbuf's; a new page when new_page), then prepend the
 * "moved" marker to the record at off of oldbuf, pointing at the new
 * record.  Both buffers are exclusively locked and have room (the caller
 * checked).  keep[] and conflict are the old record's pruning plan and
 * its conflict horizon, as for minidb_log_prepend.  Returns the new
 * record's TID.
 */
ItemPointerData
minidb_log_move(Relation rel, Buffer oldbuf, OffsetNumber off,
				const bool *keep, int nversions, TransactionId conflict,
				const MinidbVersionData *marker, int format, Buffer newbuf,
				bool new_page, const char *newrec, uint32 newlen)
{
	MinidbRecordEnd extra;
	Page		oldpage = BufferGetPage(oldbuf);
	Page		newpage = BufferGetPage(newbuf);
	bool		same = (newbuf == oldbuf);
	Buffer		vmold = InvalidBuffer;
	Buffer		vmnew = InvalidBuffer;
	bool		clear_old = PageIsAllVisible(oldpage);
	bool		clear_new = !same && !new_page && PageIsAllVisible(newpage);
	TransactionId horizon = keep ? conflict : InvalidTransactionId;
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
	ItemPointerSet(&placeholder, BufferGetBlockNumber(newbuf), FirstOffsetNumber);
	memset(&extra, 0, sizeof(extra));
	extra.successor = &placeholder;
	rec = minidb_prepend_build(oldpage, off, keep, marker, format, &extra,
							   &reclen);
	minidb_page_ensure_room(rel, oldbuf, off, reclen, same ? newlen : 0);

	START_CRIT_SECTION();
	if (new_page)
		minidb_page_init(newpage);
	ItemPointerSet(&newtid, BufferGetBlockNumber(newbuf),
				   minidb_page_add_record(newpage, newrec, newlen));
	minidb_record_patch_successor(rec, reclen, &newtid);
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
			(clear_old ? XLMD_VM_CLEARED : 0) |
			(format == MINIDB_FORMAT_V3 ? XLMD_TO_V3 : 0) |
			(TransactionIdIsValid(horizon) ? XLMD_HORIZON : 0);
		xlrec.old.recflags = 0;
		xlrec.old.successor = newtid;
		xlrec.newoff = ItemPointerGetOffsetNumber(&newtid);
		xlrec.flags = (same ? XLMD_SAME_PAGE : 0) |
			(new_page ? XLMD_INIT_NEW_PAGE : 0) |
			(clear_new ? XLMD_NEW_VM_CLEARED : 0);

		XLogBeginInsert();
		XLogRegisterData((char *) &xlrec, sizeof(xlrec));
		if (TransactionIdIsValid(horizon))
			XLogRegisterData((char *) &horizon, sizeof(horizon));
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

/*
 * Set the row lockers of the record at off of an exclusively locked buffer
 * and log it as one LOCK record (the lockers, not the bytes that moved).
 * A lock changes no version: the page stays all-visible, but not
 * all-frozen (heap_lock_tuple's rule), since the locker must be frozen.
 */
void
minidb_log_lockers(Relation rel, Buffer buffer, OffsetNumber off,
				   const MinidbLockers *lk)
{
	Page		page = BufferGetPage(buffer);
	BlockNumber blkno = BufferGetBlockNumber(buffer);
	Buffer		vmbuffer = InvalidBuffer;
	bool		clear_vm = false;
	char	   *rec;
	uint32		reclen;

	if (PageIsAllVisible(page))
	{
		visibilitymap_pin(rel, blkno, &vmbuffer);
		clear_vm = (visibilitymap_get_status(rel, blkno, &vmbuffer) &
					VISIBILITYMAP_ALL_FROZEN) != 0;
	}
	rec = minidb_lockers_build(page, off, lk, &reclen);
	minidb_page_ensure_room(rel, buffer, off, reclen, 0);

	START_CRIT_SECTION();
	minidb_page_replace_record(page, off, rec, reclen);
	if (clear_vm)
		visibilitymap_clear(rel, blkno, vmbuffer, VISIBILITYMAP_ALL_FROZEN);
	MarkBufferDirty(buffer);
	if (RelationNeedsWAL(rel))
	{
		xl_minidb_lock xlrec;
		XLogRecPtr	recptr;

		xlrec.offnum = off;
		xlrec.locker = lk->xid;
		xlrec.lockmode = lk->mode;
		xlrec.flags = (lk->multi ? XLMD_LOCK_MULTI : 0) |
			(lk->with_updater ? XLMD_LOCK_WITH_UPDATER : 0) |
			(clear_vm ? XLMD_VM_CLEARED : 0);
		XLogBeginInsert();
		XLogRegisterData((char *) &xlrec, SizeOfMinidbLock);
		XLogRegisterBuffer(0, buffer, REGBUF_STANDARD);
		recptr = XLogInsert(MINIDB_RMGR_ID, XLOG_MINIDB_LOCK);
		PageSetLSN(page, recptr);
	}
	END_CRIT_SECTION();

	if (BufferIsValid(vmbuffer))
		ReleaseBuffer(vmbuffer);
	pfree(rec);
}

/*
 * Carry out a pruning plan on an exclusively locked buffer and log it as
 * one PRUNE record: the plan, not the bytes it moved.
 */
void
minidb_log_plan(Relation rel, Buffer buffer, const MinidbPagePlan *plan)
{
	Page		page = BufferGetPage(buffer);
	BlockNumber blkno = BufferGetBlockNumber(buffer);
	Buffer		vmbuffer = InvalidBuffer;
	bool		clear_vm = PageIsAllVisible(page);
	PGAlignedBlock image;
	char	   *bdata;
	char	   *ptr;
	Size		blen;

	if (clear_vm)
		visibilitymap_pin(rel, blkno, &vmbuffer);

	/* the change on a copy: it may allocate, a critical section may not */
	memcpy(image.data, page, BLCKSZ);
	minidb_page_execute_plan((Page) image.data, plan);

	/* the block data in one piece (a record takes few pieces) */
	blen = plan->nrecords * SizeOfMinidbRplan + plan->nactions +
		(plan->ndead + plan->nunused) * sizeof(OffsetNumber);
	for (int i = 0; i < plan->nrecords; i++)
		if (plan->records[i].flags & (MINIDB_RPLAN_SET_LOCKER | MINIDB_RPLAN_SET_END_XID))
			blen += SizeOfMinidbRplanLocker;
	bdata = ptr = palloc(Max(blen, 1));
	for (int i = 0; i < plan->nrecords; i++)
	{
		xl_minidb_rplan rp;

		rp.off = plan->records[i].off;
		rp.nversions = plan->records[i].nversions;
		rp.flags = plan->records[i].flags;
		memcpy(ptr, &rp, SizeOfMinidbRplan);
		ptr += SizeOfMinidbRplan;
	}
	memcpy(ptr, plan->actions, plan->nactions);
	ptr += plan->nactions;
	memcpy(ptr, plan->dead, plan->ndead * sizeof(OffsetNumber));
	ptr += plan->ndead * sizeof(OffsetNumber);
	memcpy(ptr, plan->unused, plan->nunused * sizeof(OffsetNumber));
	ptr += plan->nunused * sizeof(OffsetNumber);
	for (int i = 0; i < plan->nrecords; i++)
		if (plan->records[i].flags & (MINIDB_RPLAN_SET_LOCKER | MINIDB_RPLAN_SET_END_XID))
		{
			memcpy(ptr, &plan->records[i].locker, sizeof(TransactionId));
			ptr += sizeof(TransactionId);
			memcpy(ptr, &plan->records[i].lockmode, sizeof(uint16));
			ptr += sizeof(uint16);
		}

	START_CRIT_SECTION();
	memcpy(page, image.data, BLCKSZ);
	if (clear_vm)
	{
		PageClearAllVisible(page);
		visibilitymap_clear(rel, blkno, vmbuffer, VISIBILITYMAP_VALID_BITS);
	}
	MarkBufferDirty(buffer);

	if (RelationNeedsWAL(rel))
	{
		xl_minidb_plan xlrec;
		XLogRecPtr	recptr;

		xlrec.conflict_xid = plan->conflict_xid;
		xlrec.prune_xid = plan->prune_xid;
		xlrec.nrecords = plan->nrecords;
		xlrec.nactions = plan->nactions;
		xlrec.ndead = plan->ndead;
		xlrec.nunused = plan->nunused;
		xlrec.flags = plan->flags;
		xlrec.vmflags = clear_vm ? XLMD_VM_CLEARED : 0;

		XLogBeginInsert();
		XLogRegisterData((char *) &xlrec, sizeof(xlrec));
		XLogRegisterBuffer(0, buffer, REGBUF_STANDARD);
		if (blen > 0)
			XLogRegisterBufData(0, bdata, blen);
		recptr = XLogInsert(MINIDB_RMGR_ID, XLOG_MINIDB_PRUNE);
		PageSetLSN(page, recptr);
	}
	END_CRIT_SECTION();

	if (BufferIsValid(vmbuffer))
		ReleaseBuffer(vmbuffer);
	pfree(bdata);
}

/*
 * Mark an exclusively locked buffer's page all-visible (and all-frozen,
 * per flags) in the page and in the visibility map, logged as one VISIBLE
 * record: what visibilitymap_set does with heap's XLOG_HEAP2_VISIBLE,
 * whose replay would check our page with heap's mask.  cutoff_xid is the
 * newest xmin the page's visibility rests on: standby queries that may not
 * see it yet are cancelled on replay.  vmbuffer is the pinned map page.
 */
void
minidb_log_visible(Relation rel, Buffer buffer, Buffer vmbuffer,
				   TransactionId cutoff_xid, uint8 flags)
{
	Page		page = BufferGetPage(buffer);
	BlockNumber blkno = BufferGetBlockNumber(buffer);
	Page		vmpage = BufferGetPage(vmbuffer);
	uint8	   *map = (uint8 *) PageGetContents(vmpage);
	uint32		mapbyte = MINIDB_VM_MAPBYTE(blkno);
	uint8		mapoff = MINIDB_VM_OFFSET(blkno);

	Assert((flags & VISIBILITYMAP_VALID_BITS) == flags);
	if (BufferGetBlockNumber(vmbuffer) != blkno / MINIDB_VM_BLOCKS_PER_PAGE)
		elog(ERROR, "wrong visibility map buffer for block %u", blkno);

	LockBuffer(vmbuffer, BUFFER_LOCK_EXCLUSIVE);
	START_CRIT_SECTION();
	PageSetAllVisible(page);
	MarkBufferDirty(buffer);
	map[mapbyte] |= (flags << mapoff);
	MarkBufferDirty(vmbuffer);
	if (RelationNeedsWAL(rel))
	{
		xl_minidb_visible xlrec;
		XLogRecPtr	recptr;

		xlrec.cutoff_xid = cutoff_xid;
		xlrec.flags = flags;
		XLogBeginInsert();
		XLogRegisterData((char *) &xlrec, sizeof(xlrec));
		XLogRegisterBuffer(0, vmbuffer, 0);
		XLogRegisterBuffer(1, buffer, REGBUF_STANDARD |
						   (XLogHintBitIsNeeded() ? 0 : REGBUF_NO_IMAGE));
		recptr = XLogInsert(MINIDB_RMGR_ID, XLOG_MINIDB_VISIBLE);
		PageSetLSN(vmpage, recptr);
		/* as for heap: the page's LSN only when hint bits are logged */
		if (XLogHintBitIsNeeded())
			PageSetLSN(page, recptr);
	}
	END_CRIT_SECTION();
	LockBuffer(vmbuffer, BUFFER_LOCK_UNLOCK);
}

/* ----------------------------------------------------------------
 * Replay
 * ----------------------------------------------------------------
 */

/* Cancel the standby queries that may need what a record removes */
static void
resolve_conflict(XLogReaderState *record, TransactionId horizon)
{
	RelFileLocator rnode;

	if (!InHotStandby || !TransactionIdIsValid(horizon))
		return;
	XLogRecGetBlockTag(record, 0, &rnode, NULL, NULL);
	minidb_resolve_snapshot_conflict(horizon, rnode);
}

/* The horizon after a record's fixed part, if the flag says there is one */
static TransactionId
record_horizon(XLogReaderState *record, Size fixed, uint8 flags)
{
	TransactionId horizon;

	if (!(flags & XLMD_HORIZON))
		return InvalidTransactionId;
	if (XLogRecGetDataLen(record) < fixed + sizeof(TransactionId))
		elog(PANIC, "minidb_redo: record too short for its horizon");
	memcpy(&horizon, XLogRecGetData(record) + fixed, sizeof(horizon));
	return horizon;
}

/* Read a logged version's bytes back into a MinidbVersionData */
static void
parse_version(const char *bytes, MinidbVersionData *v)
{
	const MinidbVersionHeaderV1 *vh = (const MinidbVersionHeaderV1 *) bytes;

	v->xmin = vh->vh_xmin;
	v->cid = vh->vh_cid;
	v->flags = vh->vh_flags;
	v->natts = vh->vh_natts;
	v->bitmap = (vh->vh_flags & MINIDB_V_HASNULL) ?
		(const bits8 *) (bytes + MINIDB_V1_VERSION_HDRSZ) : NULL;
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

/*
 * The logged version of block 0 of PREPEND and MOVE, whole again (a
 * palloc'd, aligned copy); *used gets the bytes it took.
 */
static char *
redo_version_bytes(Page page, const xl_minidb_prepend *xlprep,
				   const char *data, Size datalen, Size *used)
{
	MinidbVersionHeaderV1 vh;
	char	   *vbytes;
	const char *old;
	uint32		oldlen;
	uint16		affix[2];
	uint32		middle;

	if (datalen < MINIDB_V1_VERSION_HDRSZ)
		elog(PANIC, "minidb_redo: version data of %zu bytes is too short",
			 datalen);
	memcpy(&vh, data, sizeof(vh));
	if (vh.vh_len < MINIDB_V1_VERSION_HDRSZ || vh.vh_hoff > vh.vh_len)
		elog(PANIC, "minidb_redo: version of %u bytes with data at %u",
			 vh.vh_len, vh.vh_hoff);
	vbytes = palloc(MAXALIGN(vh.vh_len));
	if (!(xlprep->flags & XLMD_DATA_DIFF))
	{
		if (vh.vh_len > datalen)
			elog(PANIC, "minidb_redo: version of %u bytes overruns the record data",
				 vh.vh_len);
		memcpy(vbytes, data, vh.vh_len);
		*used = vh.vh_len;
		return vbytes;
	}

	/* prefix and suffix from the head of the record on this page */
	if ((Size) vh.vh_hoff + sizeof(affix) > datalen)
		elog(PANIC, "minidb_redo: compressed version overruns the record data");
	memcpy(affix, data + vh.vh_hoff, sizeof(affix));
	if ((uint32) affix[0] + affix[1] > (uint32) (vh.vh_len - vh.vh_hoff))
		elog(PANIC, "minidb_redo: prefix %u and suffix %u exceed the version",
			 affix[0], affix[1]);
	middle = vh.vh_len - vh.vh_hoff - affix[0] - affix[1];
	if ((Size) vh.vh_hoff + sizeof(affix) + middle > datalen)
		elog(PANIC, "minidb_redo: compressed version overruns the record data");
	if (!head_data(page, xlprep->offnum, &old, &oldlen) ||
		(uint32) affix[0] + affix[1] > oldlen)
		elog(PANIC, "minidb_redo: no head at offset %u to complete a version from",
			 xlprep->offnum);
	memcpy(vbytes, data, vh.vh_hoff);
	memcpy(vbytes + vh.vh_hoff, old, affix[0]);
	memcpy(vbytes + vh.vh_hoff + affix[0], data + vh.vh_hoff + sizeof(affix),
		   middle);
	memcpy(vbytes + vh.vh_hoff + affix[0] + middle,
		   old + oldlen - affix[1], affix[1]);
	*used = vh.vh_hoff + sizeof(affix) + middle;
	return vbytes;
}

/*
 * An xl_minidb_cversion that runs to the end of data (datalen bytes) back
 * into *v, whose bitmap and data point into *buf (palloc'd here).  With
 * diffed, the prefix and suffix come from the head of the record at off on
 * page, which must not have changed yet.
 */
static void
redo_cversion(Page page, OffsetNumber off, bool diffed, TransactionId xmin,
			  const char *data, Size datalen, MinidbVersionData *v,
			  char **buf)
{
	xl_minidb_cversion cv;
	uint32		bitmaplen;
	uint16		affix[2] = {0, 0};
	const char *old = NULL;
	uint32		oldlen = 0;
	Size		middle;
	char	   *p;

	if (datalen < SizeOfMinidbCversion)
		elog(PANIC, "minidb_redo: version data of %zu bytes is too short",
			 datalen);
	memcpy(&cv, data, SizeOfMinidbCversion);
	data += SizeOfMinidbCversion;
	datalen -= SizeOfMinidbCversion;
	bitmaplen = minidb_version_bitmaplen(cv.flags, cv.natts);
	if (cv.natts > MINIDB_MAX_NATTS || bitmaplen > datalen)
		elog(PANIC, "minidb_redo: version of %u attributes overruns the record data",
			 cv.natts);
	if (diffed)
	{
		if (bitmaplen + sizeof(affix) > datalen)
			elog(PANIC, "minidb_redo: compressed version overruns the record data");
		memcpy(affix, data + bitmaplen, sizeof(affix));
		if (!head_data(page, off, &old, &oldlen) ||
			(uint32) affix[0] + affix[1] > oldlen)
			elog(PANIC, "minidb_redo: no head at offset %u to complete a version from",
				 off);
		middle = datalen - bitmaplen - sizeof(affix);
	}
	else
		middle = datalen - bitmaplen;

	*buf = palloc(bitmaplen + affix[0] + middle + affix[1] + 1);
	p = *buf;
	memcpy(p, data, bitmaplen);
	p += bitmaplen;
	if (affix[0] > 0)
		memcpy(p, old, affix[0]);
	p += affix[0];
	memcpy(p, data + bitmaplen + (diffed ? sizeof(affix) : 0), middle);
	p += middle;
	if (affix[1] > 0)
		memcpy(p, old + oldlen - affix[1], affix[1]);

	v->xmin = xmin;
	v->cid = cv.cid;
	v->flags = cv.flags;
	v->natts = cv.natts;
	v->bitmap = bitmaplen > 0 ? (const bits8 *) *buf : NULL;
	v->data = *buf + bitmaplen;
	v->datalen = affix[0] + middle + affix[1];
}

/* Block 0 of PREPEND and MOVE: prune, prepend; returns bytes consumed */
static Size
redo_prepend_block(Page page, const xl_minidb_prepend *xlprep,
				   TransactionId xmin, const char *data, Size datalen)
{
	Size		keeplen = (xlprep->flags & XLMD_PRUNED) ?
		xlprep->nversions * sizeof(bool) : 0;
	bool	   *keep = NULL;
	char	   *vbytes;
	char	   *rec;
	uint32		reclen;
	Size		used;
	MinidbVersionData v;
	MinidbRecordEnd extra;

	if (keeplen > datalen)
		elog(PANIC, "minidb_redo: prepend data of %zu bytes is too short",
			 datalen);
	if (keeplen)
	{
		keep = palloc(keeplen);
		memcpy(keep, data, keeplen);
	}
	/* before the record changes: a compressed version needs its head */
	if (xlprep->flags & XLMD_COMPACT)
	{
		redo_cversion(page, xlprep->offnum,
					  (xlprep->flags & XLMD_DATA_DIFF) != 0, xmin,
					  data + keeplen, datalen - keeplen, &v, &vbytes);
		used = datalen - keeplen;
	}
	else
	{
		vbytes = redo_version_bytes(page, xlprep, data + keeplen,
									datalen - keeplen, &used);
		parse_version(vbytes, &v);
	}
	memset(&extra, 0, sizeof(extra));
	if (xlprep->flags & XLMD_HAS_SUCCESSOR)
		extra.successor = &xlprep->successor;
	extra.moved_part = (xlprep->recflags & MINIDB_REC_MOVED_PART) != 0;
	extra.drop_lockers = (xlprep->recflags & XLMD_REC_DROP_LOCKERS) != 0;
	rec = minidb_prepend_build(page, xlprep->offnum, keep, &v,
							   (xlprep->flags & XLMD_TO_V3) ?
							   MINIDB_FORMAT_V3 : 0,
							   &extra, &reclen);
	minidb_prepend_place(page, xlprep->offnum, rec, reclen, v.xmin);
	if (xlprep->flags & XLMD_VM_CLEARED)
		PageClearAllVisible(page);
	pfree(rec);
	pfree(vbytes);
	if (keep)
		pfree(keep);
	return keeplen + used;
}

static void
redo_move(XLogReaderState *record)
{
	xl_minidb_move *xlrec = (xl_minidb_move *) XLogRecGetData(record);
	XLogRecPtr	lsn = record->EndRecPtr;
	bool		same = (xlrec->flags & XLMD_SAME_PAGE) != 0;
	Buffer		oldbuf;
	Buffer		newbuf = InvalidBuffer;

	resolve_conflict(record, record_horizon(record, sizeof(xl_minidb_move),
											xlrec->old.flags));
	if (xlrec->old.flags & XLMD_VM_CLEARED)
		minidb_redo_clear_vm(record, 0);
	if (xlrec->flags & XLMD_NEW_VM_CLEARED)
		minidb_redo_clear_vm(record, 1);

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
			Size		used = MINIDB_V1_VERSION_HDRSZ +
				((xlprep.flags & XLMD_PRUNED) ?
				 xlprep.nversions * sizeof(bool) : 0);

			if (used > datalen)
				elog(PANIC, "minidb_redo: move data of %zu bytes is too short",
					 datalen);
			redo_add_record(page, xlrec->newoff, data + used, datalen - used);
		}
		redo_prepend_block(page, &xlprep, InvalidTransactionId, data, datalen);
		PageSetLSN(page, lsn);
		MarkBufferDirty(oldbuf);
	}
	if (BufferIsValid(oldbuf))
		UnlockReleaseBuffer(oldbuf);
	if (BufferIsValid(newbuf))
		UnlockReleaseBuffer(newbuf);
}

/*
 * A PREPEND record's main data, either layout: the fixed part in *xlrec
 * (successor invalid when not logged), the horizon and the version's xmin
 * (the record's xid unless logged; compact layout only)
 */
static void
parse_prepend(XLogReaderState *record, xl_minidb_prepend *xlrec,
			  TransactionId *horizon, TransactionId *xmin)
{
	const char *data = XLogRecGetData(record);
	Size		len = XLogRecGetDataLen(record);
	Size		pos;

	if (len < SizeOfMinidbPrependCompact)
		elog(PANIC, "minidb_redo: PREPEND record too short");
	memcpy(xlrec, data, SizeOfMinidbPrependCompact);
	*xmin = XLogRecGetXid(record);
	if (!(xlrec->flags & XLMD_COMPACT))
	{
		if (len < sizeof(xl_minidb_prepend))
			elog(PANIC, "minidb_redo: PREPEND record too short");
		memcpy(xlrec, data, sizeof(xl_minidb_prepend));
		*horizon = record_horizon(record, sizeof(xl_minidb_prepend),
								  xlrec->flags);
		return;
	}
	pos = SizeOfMinidbPrependCompact;
	ItemPointerSetInvalid(&xlrec->successor);
	*horizon = InvalidTransactionId;
	if ((xlrec->flags & XLMD_HAS_SUCCESSOR) &&
		len >= pos + sizeof(ItemPointerData))
	{
		memcpy(&xlrec->successor, data + pos, sizeof(ItemPointerData));
		pos += sizeof(ItemPointerData);
	}
	if ((xlrec->flags & XLMD_HORIZON) && len >= pos + sizeof(TransactionId))
	{
		memcpy(horizon, data + pos, sizeof(TransactionId));
		pos += sizeof(TransactionId);
	}
	if ((xlrec->flags & XLMD_XMIN) && len >= pos + sizeof(TransactionId))
	{
		memcpy(xmin, data + pos, sizeof(TransactionId));
		pos += sizeof(TransactionId);
	}
	if (pos != len)
		elog(PANIC, "minidb_redo: PREPEND record of %zu bytes, %zu expected",
			 len, pos);
}

static void
redo_prepend(XLogReaderState *record)
{
	xl_minidb_prepend xlrec;
	TransactionId horizon;
	TransactionId xmin;
	Buffer		buffer;

	parse_prepend(record, &xlrec, &horizon, &xmin);
	resolve_conflict(record, horizon);
	if (xlrec.flags & XLMD_VM_CLEARED)
		minidb_redo_clear_vm(record, 0);
	if (XLogReadBufferForRedo(record, 0, &buffer) == BLK_NEEDS_REDO)
	{
		Page		page = BufferGetPage(buffer);
		Size		datalen;
		char	   *data = XLogRecGetBlockData(record, 0, &datalen);

		redo_prepend_block(page, &xlrec, xmin, data, datalen);
		PageSetLSN(page, record->EndRecPtr);
		MarkBufferDirty(buffer);
	}
	if (BufferIsValid(buffer))
		UnlockReleaseBuffer(buffer);
}

/* A new record: minidb_log_insert's, rebuilt from its version */
static void
redo_insert(XLogReaderState *record)
{
	const char *mdata = XLogRecGetData(record);
	Size		mainlen = XLogRecGetDataLen(record);
	xl_minidb_insert xlrec;
	TransactionId xmin = XLogRecGetXid(record);
	uint32		token = 0;
	Size		pos = SizeOfMinidbInsert;
	Buffer		buffer;
	XLogRedoAction action;

	if (mainlen < SizeOfMinidbInsert)
		elog(PANIC, "minidb_redo: INSERT record too short");
	memcpy(&xlrec, mdata, SizeOfMinidbInsert);
	if (xlrec.format < MINIDB_FORMAT_V1 || xlrec.format > MINIDB_FORMAT_MAX)
		elog(PANIC, "minidb_redo: INSERT of a record in unknown format %u",
			 xlrec.format);
	if (xlrec.flags & XLMI_SPECULATIVE)
	{
		if (mainlen < pos + sizeof(token))
			elog(PANIC, "minidb_redo: INSERT record too short");
		memcpy(&token, mdata + pos, sizeof(token));
		pos += sizeof(token);
	}
	if (xlrec.flags & XLMI_XMIN)
	{
		if (mainlen < pos + sizeof(xmin))
			elog(PANIC, "minidb_redo: INSERT record too short");
		memcpy(&xmin, mdata + pos, sizeof(xmin));
	}

	if (xlrec.flags & XLMI_VM_CLEARED)
		minidb_redo_clear_vm(record, 0);
	if (xlrec.flags & XLMI_INIT_PAGE)
	{
		buffer = XLogInitBufferForRedo(record, 0);
		minidb_page_init(BufferGetPage(buffer));
		action = BLK_NEEDS_REDO;
	}
	else
		action = XLogReadBufferForRedo(record, 0, &buffer);
	if (action == BLK_NEEDS_REDO)
	{
		Page		page = BufferGetPage(buffer);
		Size		datalen;
		char	   *data = XLogRecGetBlockData(record, 0, &datalen);
		MinidbVersionData v;
		char	   *vbuf;
		char	   *rec;
		uint32		size;
		uint32		len;
		MinidbRecordEnd extra;
		ItemPointerData tokentid;

		redo_cversion(page, xlrec.offnum, false, xmin, data, datalen, &v,
					  &vbuf);
		memset(&extra, 0, sizeof(extra));
		if (xlrec.flags & XLMI_SPECULATIVE)
		{
			ItemPointerSet(&tokentid, token, SpecTokenOffsetNumber);
			extra.successor = &tokentid;
			extra.spec = true;
		}
		size = minidb_record_build_ex(NULL, 0, &v, xlrec.format, &extra);
		if (size == 0 || size > MINIDB_MAX_RECORD_LEN)
			elog(PANIC, "minidb_redo: INSERT of a record of %u bytes in format %u",
				 size, xlrec.format);
		rec = palloc(MAXALIGN(size));
		len = minidb_record_build_ex(rec, MAXALIGN(size), &v, xlrec.format,
									 &extra);
		redo_add_record(page, xlrec.offnum, rec, len);
		if (xlrec.flags & XLMI_VM_CLEARED)
			PageClearAllVisible(page);
		PageSetLSN(page, record->EndRecPtr);
		MarkBufferDirty(buffer);
		pfree(rec);
		pfree(vbuf);
	}
	if (BufferIsValid(buffer))
		UnlockReleaseBuffer(buffer);
}

static void
redo_lock(XLogReaderState *record)
{
	xl_minidb_lock xlrec;
	Buffer		buffer;

	memcpy(&xlrec, XLogRecGetData(record), SizeOfMinidbLock);
	if (xlrec.flags & XLMD_VM_CLEARED)
	{
		RelFileLocator rnode;
		BlockNumber blkno;
		Relation	reln;
		Buffer		vmbuffer = InvalidBuffer;

		XLogRecGetBlockTag(record, 0, &rnode, NULL, &blkno);
		reln = CreateFakeRelcacheEntry(rnode);
		visibilitymap_pin(reln, blkno, &vmbuffer);
		visibilitymap_clear(reln, blkno, vmbuffer, VISIBILITYMAP_ALL_FROZEN);
		ReleaseBuffer(vmbuffer);
		FreeFakeRelcacheEntry(reln);
	}
	if (XLogReadBufferForRedo(record, 0, &buffer) == BLK_NEEDS_REDO)
	{
		Page		page = BufferGetPage(buffer);
		MinidbLockers lk;
		char	   *rec;
		uint32		reclen;

		lk.xid = xlrec.locker;
		lk.mode = xlrec.lockmode;
		lk.multi = (xlrec.flags & XLMD_LOCK_MULTI) != 0;
		lk.with_updater = (xlrec.flags & XLMD_LOCK_WITH_UPDATER) != 0;
		rec = minidb_lockers_build(page, xlrec.offnum, &lk, &reclen);
		minidb_page_replace_record(page, xlrec.offnum, rec, reclen);
		pfree(rec);
		PageSetLSN(page, record->EndRecPtr);
		MarkBufferDirty(buffer);
	}
	if (BufferIsValid(buffer))
		UnlockReleaseBuffer(buffer);
}

/* A PRUNE record's plan, read back (palloc'd) */
static MinidbPagePlan *
parse_plan(XLogReaderState *record)
{
	xl_minidb_plan xlrec;
	MinidbPagePlan *plan = palloc(sizeof(MinidbPagePlan));
	Size		datalen;
	char	   *data = XLogRecGetBlockData(record, 0, &datalen);
	int			first = 0;

	memcpy(&xlrec, XLogRecGetData(record), sizeof(xlrec));
	if (xlrec.nrecords > MaxHeapTuplesPerPage ||
		xlrec.nactions > MINIDB_MAX_PAGE_VERSIONS ||
		xlrec.ndead > MaxHeapTuplesPerPage ||
		xlrec.nunused > MaxHeapTuplesPerPage ||
		datalen < xlrec.nrecords * SizeOfMinidbRplan + xlrec.nactions +
		(xlrec.ndead + xlrec.nunused) * sizeof(OffsetNumber))
		elog(PANIC, "minidb_redo: malformed PRUNE record");
	minidb_plan_init(plan);
	plan->conflict_xid = xlrec.conflict_xid;
	plan->prune_xid = xlrec.prune_xid;
	plan->flags = xlrec.flags;
	for (int i = 0; i < xlrec.nrecords; i++)
	{
		xl_minidb_rplan rp;
		MinidbRecordPlan *p = &plan->records[i];

		memcpy(&rp, data, SizeOfMinidbRplan);
		data += SizeOfMinidbRplan;
		p->off = rp.off;
		p->nversions = rp.nversions;
		p->flags = rp.flags;
		p->first = first;
		first += rp.nversions;
	}
	if (first != xlrec.nactions)
		elog(PANIC, "minidb_redo: PRUNE record with %d actions for %u",
			 first, xlrec.nactions);
	plan->nrecords = xlrec.nrecords;
	plan->nactions = xlrec.nactions;
	memcpy(plan->actions, data, xlrec.nactions);
	data += xlrec.nactions;
	plan->ndead = xlrec.ndead;
	memcpy(plan->dead, data, xlrec.ndead * sizeof(OffsetNumber));
	data += xlrec.ndead * sizeof(OffsetNumber);
	plan->nunused = xlrec.nunused;
	memcpy(plan->unused, data, xlrec.nunused * sizeof(OffsetNumber));
	data += xlrec.nunused * sizeof(OffsetNumber);
	datalen -= xlrec.nrecords * SizeOfMinidbRplan + xlrec.nactions +
		(xlrec.ndead + xlrec.nunused) * sizeof(OffsetNumber);
	for (int i = 0; i < xlrec.nrecords; i++)
	{
		MinidbRecordPlan *p = &plan->records[i];

		if (!(p->flags & (MINIDB_RPLAN_SET_LOCKER | MINIDB_RPLAN_SET_END_XID)))
			continue;
		if (datalen < SizeOfMinidbRplanLocker)
			elog(PANIC, "minidb_redo: PRUNE record lacks a new locker");
		memcpy(&p->locker, data, sizeof(TransactionId));
		memcpy(&p->lockmode, data + sizeof(TransactionId), sizeof(uint16));
		data += SizeOfMinidbRplanLocker;
		datalen -= SizeOfMinidbRplanLocker;
	}
	if (datalen != 0)
		elog(PANIC, "minidb_redo: malformed PRUNE record");
	return plan;
}

static void
redo_prune(XLogReaderState *record)
{
	xl_minidb_plan *xlrec = (xl_minidb_plan *) XLogRecGetData(record);
	Buffer		buffer;

	resolve_conflict(record, xlrec->conflict_xid);
	if (xlrec->vmflags & XLMD_VM_CLEARED)
		minidb_redo_clear_vm(record, 0);
	if (XLogReadBufferForRedo(record, 0, &buffer) == BLK_NEEDS_REDO)
	{
		Page		page = BufferGetPage(buffer);
		MinidbPagePlan *plan = parse_plan(record);

		minidb_page_execute_plan(page, plan);
		if (xlrec->vmflags & XLMD_VM_CLEARED)
			PageClearAllVisible(page);
		PageSetLSN(page, record->EndRecPtr);
		MarkBufferDirty(buffer);
		pfree(plan);
	}
	if (BufferIsValid(buffer))
	{
		RelFileLocator rnode;
		BlockNumber blkno;
		Size		space = minidb_page_free_for_insert(BufferGetPage(buffer));

		/* the free space map is not WAL-logged: keep a promoted one close */
		XLogRecGetBlockTag(record, 0, &rnode, NULL, &blkno);
		UnlockReleaseBuffer(buffer);
		XLogRecordPageWithFreeSpace(rnode, blkno, space);
	}
}

/* heap_xlog_visible, for our pages */
static void
redo_visible(XLogReaderState *record)
{
	XLogRecPtr	lsn = record->EndRecPtr;
	xl_minidb_visible *xlrec = (xl_minidb_visible *) XLogRecGetData(record);
	Buffer		vmbuffer = InvalidBuffer;
	Buffer		buffer;
	RelFileLocator rnode;
	BlockNumber blkno;

	XLogRecGetBlockTag(record, 1, &rnode, NULL, &blkno);
	if (InHotStandby)
		minidb_resolve_snapshot_conflict(xlrec->cutoff_xid, rnode);

	/*
	 * Every record that clears the map bit bumps the page's LSN, so a page
	 * whose LSN is past this record is not marked (heap_xlog_visible).
	 */
	if (XLogReadBufferForRedo(record, 1, &buffer) == BLK_NEEDS_REDO)
	{
		Page		page = BufferGetPage(buffer);

		PageSetAllVisible(page);
		if (XLogHintBitIsNeeded())
			PageSetLSN(page, lsn);
		MarkBufferDirty(buffer);
	}
	if (BufferIsValid(buffer))
		UnlockReleaseBuffer(buffer);

	if (XLogReadBufferForRedoExtended(record, 0, RBM_ZERO_ON_ERROR, false,
									  &vmbuffer) == BLK_NEEDS_REDO)
	{
		Page		vmpage = BufferGetPage(vmbuffer);
		Relation	reln;

		if (PageIsNew(vmpage))
			PageInit(vmpage, BLCKSZ, 0);
		/* visibilitymap_set takes the lock itself */
		LockBuffer(vmbuffer, BUFFER_LOCK_UNLOCK);
		reln = CreateFakeRelcacheEntry(rnode);
		visibilitymap_pin(reln, blkno, &vmbuffer);
		if (lsn > PageGetLSN(vmpage))
			visibilitymap_set(reln, blkno, InvalidBuffer, lsn, vmbuffer,
							  xlrec->cutoff_xid, xlrec->flags);
		ReleaseBuffer(vmbuffer);
		FreeFakeRelcacheEntry(reln);
	}
	else if (BufferIsValid(vmbuffer))
		UnlockReleaseBuffer(vmbuffer);
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
		case XLOG_MINIDB_INSERT:
			redo_insert(record);
			break;
		case XLOG_MINIDB_MOVE:
			redo_move(record);
			break;
		case XLOG_MINIDB_PRUNE:
			redo_prune(record);
			break;
		case XLOG_MINIDB_DELTA:
			minidb_wal_redo_delta(record);
			break;
		case XLOG_MINIDB_VISIBLE:
			redo_visible(record);
			break;
		case XLOG_MINIDB_LOGICAL:
			/* for logical decoding only (minidb_logical.c) */
			break;
		case XLOG_MINIDB_LOCK:
			redo_lock(record);
			break;
		case XLOG_MINIDB_HORIZON:
			{
				xl_minidb_horizon *xlrec = (xl_minidb_horizon *) XLogRecGetData(record);

				if (InHotStandby)
					minidb_resolve_snapshot_conflict(xlrec->latest_removed,
													 xlrec->node);
			}
			break;
		default:
			elog(PANIC, "minidb_redo: unknown op code %u", info);
	}
}

/* ----------------------------------------------------------------
 * Masking for wal_consistency_checking
 * ----------------------------------------------------------------
 */

/* Is this a minidb table page?  (A map page, or a new one, is not.) */
static bool
is_minidb_page(Page page)
{
	PageHeader	hdr = (PageHeader) page;

	if (PageIsNew(page) ||
		hdr->pd_special != BLCKSZ - MAXALIGN(sizeof(MinidbPageOpaqueData)))
		return false;
	return MinidbPageGetOpaque(page)->md_magic == MINIDB_PAGE_MAGIC;
}

/* Clear the hint bits of the version header at vh (any alignment) */
static void
mask_version(char *vh)
{
	uint16		flags;
	char	   *p = vh + offsetof(MinidbVersionHeader, vh_flags);

	memcpy(&flags, p, sizeof(flags));
	flags &= ~(MINIDB_V_XMIN_COMMITTED | MINIDB_V_XMIN_ABORTED);
	memcpy(p, &flags, sizeof(flags));
}

/*
 * V3: the end's hints in the header, and each version's.  Versions start
 * at 4-alignment after the header and after each other's ends, which the
 * trailer lists; every offset is checked against len.
 */
static void
mask_record_v3(char *rec, uint32 len)
{
	uint8		info = (uint8) rec[0];
	uint32		start;
	uint32		trailer = len;
	uint16		n = 1;

	if (len < MINIDB_R3_INFO_PREFIX)
		return;
	rec[1] &= ~(MINIDB_R3X_COMMITTED | MINIDB_R3X_INVALID);
	start = MINIDB_R3_INFO_PREFIX +
		((info & MINIDB_R3_XMAX) ? sizeof(TransactionId) : 0) +
		((info & MINIDB_R3_SUCC) ? sizeof(ItemPointerData) : 0);
	start = TYPEALIGN(4, start);
	if (info & MINIDB_R3_MULTI)
	{
		if (len % 2 != 0 || len < 2)
			return;
		memcpy(&n, rec + len - sizeof(uint16), sizeof(n));
		if ((uint32) (n + 1) * sizeof(uint16) > len)
			return;
		trailer = len - (n + 1) * sizeof(uint16);
	}
	for (int i = 0; i < n; i++)
	{
		uint16		end = (uint16) len;

		if (start > trailer || trailer - start < MINIDB_VERSION_HDRSZ)
			break;
		mask_version(rec + start);
		if (info & MINIDB_R3_MULTI)
			memcpy(&end, rec + trailer + i * sizeof(uint16), sizeof(end));
		if (end < start + MINIDB_VERSION_HDRSZ)
			break;
		start = TYPEALIGN(4, end);
	}
}

/*
 * The hint bits of every version of a record of len bytes.  The page may
 * be damaged: every offset is checked against len before it is used, and
 * the walk stops at the first one that does not fit.
 */
static void
mask_record(char *rec, uint32 len)
{
	uint8		format;
	uint16		nversions;

	if (len >= 1 && minidb_record_format_of(rec) == MINIDB_FORMAT_V3)
	{
		mask_record_v3(rec, len);
		return;
	}
	if (len < MINIDB_RECORD_HDRSZ)
		return;
	format = (uint8) rec[offsetof(MinidbRecordHeader, rh_format)];
	memcpy(&nversions, rec + offsetof(MinidbRecordHeader, rh_nversions),
		   sizeof(nversions));
	if (nversions > len / MINIDB_V1_VERSION_HDRSZ)
		nversions = len / MINIDB_V1_VERSION_HDRSZ;

	if (format == MINIDB_FORMAT_V1)
	{
		uint32		off = MINIDB_RECORD_HDRSZ;

		for (int i = 0; i < nversions; i++)
		{
			uint16		vlen;

			if (off > len || len - off < MINIDB_V1_VERSION_HDRSZ)
				break;
			mask_version(rec + off);
			memcpy(&vlen, rec + off + offsetof(MinidbVersionHeaderV1, vh_len),
				   sizeof(vlen));
			if (vlen < MINIDB_V1_VERSION_HDRSZ)
				break;
			off = MAXALIGN(off + vlen);
		}
	}
	else if (format == MINIDB_FORMAT_V2)
	{
		for (int i = 0; i < nversions; i++)
		{
			uint32		doff = MINIDB_V2_DIR_OFFSET + i * sizeof(uint16);
			uint16		voff;

			if (doff + sizeof(uint16) > len)
				break;
			memcpy(&voff, rec + doff, sizeof(voff));
			if (voff < doff + sizeof(uint16) || voff > len ||
				len - voff < MINIDB_V1_VERSION_HDRSZ)
				break;
			mask_version(rec + voff);
		}
	}
}

/*
 * Mask what may differ between a primary's page and its replay: heap_mask
 * (heapam.c) for minidb pages.  Any other page (a visibility map page) is
 * compared as it is, LSN and checksum aside.  Never trusts the page: a
 * damaged page is masked as far as it can be and then compared.
 */
static void
minidb_mask(char *pagedata, BlockNumber blkno)
{
	Page		page = (Page) pagedata;
	PageHeader	hdr = (PageHeader) page;
	int			nitems;

	mask_page_lsn_and_checksum(page);
	if (!is_minidb_page(page))
		return;
	mask_page_hint_bits(page);
	if (hdr->pd_lower < SizeOfPageHeaderData || hdr->pd_lower > hdr->pd_upper ||
		hdr->pd_upper > hdr->pd_special)
		return;
	mask_unused_space(page);

	nitems = (hdr->pd_lower - SizeOfPageHeaderData) / sizeof(ItemIdData);
	for (int i = 0; i < nitems; i++)
	{
		ItemId		lp = PageGetItemId(page, (OffsetNumber) (i + 1));
		uint32		off = ItemIdGetOffset(lp);
		uint32		len = ItemIdGetLength(lp);

		if (!ItemIdHasStorage(lp) || off < hdr->pd_upper ||
			off + MAXALIGN(len) > hdr->pd_special)
			continue;
		if (ItemIdIsNormal(lp))
			mask_record(pagedata + off, len);
		/* the padding after a record is not written */
		if (MAXALIGN(len) > len)
			memset(pagedata + off + len, MASK_MARKER, MAXALIGN(len) - len);
	}
}

/* ----------------------------------------------------------------
 * Description
 * ----------------------------------------------------------------
 */
static void
minidb_desc(StringInfo buf, XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;
	char	   *data = XLogRecGetData(record);

	if (info == XLOG_MINIDB_PREPEND)
	{
		xl_minidb_prepend xlrec;
		TransactionId horizon;
		TransactionId xmin;

		parse_prepend(record, &xlrec, &horizon, &xmin);
		appendStringInfo(buf, "off %u, flags 0x%02X, pruned from %u versions",
						 xlrec.offnum, xlrec.flags, xlrec.nversions);
		if (xlrec.recflags & XLMD_REC_DROP_LOCKERS)
			appendStringInfoString(buf, ", lockers dropped");
		if (TransactionIdIsValid(horizon))
			appendStringInfo(buf, ", horizon %u", horizon);
	}
	else if (info == XLOG_MINIDB_INSERT)
	{
		xl_minidb_insert xlrec;

		memcpy(&xlrec, data, SizeOfMinidbInsert);
		appendStringInfo(buf, "off %u, flags 0x%02X, format %u",
						 xlrec.offnum, xlrec.flags, xlrec.format);
	}
	else if (info == XLOG_MINIDB_MOVE)
	{
		xl_minidb_move *xlrec = (xl_minidb_move *) data;

		appendStringInfo(buf, "off %u -> (%u,%u), flags 0x%02X/0x%02X",
						 xlrec->old.offnum,
						 ItemPointerGetBlockNumberNoCheck(&xlrec->old.successor),
						 xlrec->newoff, xlrec->old.flags, xlrec->flags);
		if (xlrec->old.flags & XLMD_HORIZON)
			appendStringInfo(buf, ", horizon %u",
							 record_horizon(record, sizeof(*xlrec),
											xlrec->old.flags));
	}
	else if (info == XLOG_MINIDB_PRUNE)
	{
		xl_minidb_plan *xlrec = (xl_minidb_plan *) data;

		appendStringInfo(buf, "records %u, versions %u, dead %u, unused %u, flags 0x%02X",
						 xlrec->nrecords, xlrec->nactions, xlrec->ndead,
						 xlrec->nunused, xlrec->flags);
		if (TransactionIdIsValid(xlrec->conflict_xid))
			appendStringInfo(buf, ", horizon %u", xlrec->conflict_xid);
	}
	else if (info == XLOG_MINIDB_DELTA)
	{
		xl_minidb_delta *xlrec = (xl_minidb_delta *) data;

		appendStringInfo(buf, "vmclear 0x%02X", xlrec->vmclear);
	}
	else if (info == XLOG_MINIDB_VISIBLE)
	{
		xl_minidb_visible *xlrec = (xl_minidb_visible *) data;

		appendStringInfo(buf, "cutoff xid %u flags 0x%02X",
						 xlrec->cutoff_xid, xlrec->flags);
	}
	else if (info == XLOG_MINIDB_LOGICAL)
	{
		xl_minidb_logical xlrec;
		static const char *const actions[] = {"?", "insert", "update", "delete"};

		memcpy(&xlrec, data, SizeOfMinidbLogical);
		appendStringInfo(buf, "rel %u/%u/%u, %s, %u tuples%s",
						 MINIDB_LOCATOR_SPC(xlrec.node),
						 MINIDB_LOCATOR_DB(xlrec.node),
						 MINIDB_LOCATOR_REL(xlrec.node),
						 actions[xlrec.action <= XLML_DELETE ? xlrec.action : 0],
						 xlrec.ntuples,
						 (xlrec.flags & XLML_HAS_OLD) ? ", old row first" : "");
	}
	else if (info == XLOG_MINIDB_LOCK)
	{
		xl_minidb_lock xlrec;

		memcpy(&xlrec, data, SizeOfMinidbLock);
		appendStringInfo(buf, "off %u, locker %u%s, mode %u, flags 0x%02X",
						 xlrec.offnum, xlrec.locker,
						 (xlrec.flags & XLMD_LOCK_MULTI) ? " (multi)" : "",
						 xlrec.lockmode, xlrec.flags);
	}
	else if (info == XLOG_MINIDB_HORIZON)
	{
		xl_minidb_horizon *xlrec = (xl_minidb_horizon *) data;

		appendStringInfo(buf, "rel %u/%u/%u, latest removed xid %u",
						 MINIDB_LOCATOR_SPC(xlrec->node),
						 MINIDB_LOCATOR_DB(xlrec->node),
						 MINIDB_LOCATOR_REL(xlrec->node), xlrec->latest_removed);
	}
}

static const char *
minidb_identify(uint8 info)
{
	switch (info & ~XLR_INFO_MASK)
	{
		case XLOG_MINIDB_PREPEND:
			return "PREPEND";
		case XLOG_MINIDB_INSERT:
			return "INSERT";
		case XLOG_MINIDB_MOVE:
			return "MOVE";
		case XLOG_MINIDB_HORIZON:
			return "HORIZON";
		case XLOG_MINIDB_PRUNE:
			return "PRUNE";
		case XLOG_MINIDB_DELTA:
			return "DELTA";
		case XLOG_MINIDB_VISIBLE:
			return "VISIBLE";
		case XLOG_MINIDB_LOGICAL:
			return "LOGICAL";
		case XLOG_MINIDB_LOCK:
			return "LOCK";
	}
	return NULL;
}

static RmgrData minidb_rmgr = {
	.rm_name = "minidb",
	.rm_redo = minidb_redo,
	.rm_desc = minidb_desc,
	.rm_identify = minidb_identify,
	.rm_mask = minidb_mask,
	.rm_decode = minidb_decode,
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
