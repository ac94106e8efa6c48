/*-------------------------------------------------------------------------
 *
 * minidb_ddl.c
 *	  Storage, index builds, size estimates and index-entry deletion.
 *
 * Index builds see one record per TID.  The entry a record gets carries
 * the values of its newest version that a snapshot could still want; if
 * older versions that some snapshot may still see differ in the index's
 * columns, the chain is "broken" for this index and we set
 * ii_BrokenHotChain, so the server marks the index indcheckxmin and old
 * snapshots do not use it -- exactly heap's answer for a broken HOT chain.
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/genam.h"
#include "access/heaptoast.h"
#include "access/htup_details.h"
#include "access/multixact.h"
#include "access/toast_internals.h"
#include "access/transam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "catalog/storage.h"
#include "catalog/storage_xlog.h"
#include "commands/progress.h"
#include "executor/executor.h"
#include "nodes/bitmapset.h"
#include "optimizer/optimizer.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/freespace.h"
#include "storage/procarray.h"
#include "storage/smgr.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/tuplesort.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "chain.h"
#include "minidb_page.h"
#include "minidb_wal.h"
#include "btree_view.h"
#include "minidb_visibility.h"
#include "minidb_tuple.h"
#include "minidb_prune.h"
#include "minidb_scan.h"
#include "minidb_ddl.h"

/* ----------------------------------------------------------------
 * Storage
 * ----------------------------------------------------------------
 */
void
minidb_relation_set_new_filenode(Relation rel, const RelFileLocator *newrnode,
								 char persistence, TransactionId *freezeXid,
								 MultiXactId *minmulti)
{
	SMgrRelation srel;

	/* every xid in the new relation will be newer than this */
	*freezeXid = RecentXmin;
	*minmulti = GetOldestMultiXactId();

	srel = RelationCreateStorage(*newrnode, persistence, true);
	if (persistence == RELPERSISTENCE_UNLOGGED)
	{
		/* an unlogged relation needs an init fork, made durable now */
		smgrcreate(srel, INIT_FORKNUM, false);
		log_smgrcreate(newrnode, INIT_FORKNUM);
		smgrimmedsync(srel, INIT_FORKNUM);
	}
	smgrclose(srel);
}

void
minidb_relation_nontransactional_truncate(Relation rel)
{
	RelationTruncate(rel, 0);
}

/* ALTER TABLE ... SET TABLESPACE: copy every fork, WAL-logged as needed */
void
minidb_relation_copy_data(Relation rel, const RelFileLocator *newrnode)
{
	SMgrRelation dstrel = smgropen(*newrnode, rel->rd_backend);

	FlushRelationBuffers(rel);
	RelationCreateStorage(*newrnode, rel->rd_rel->relpersistence, true);
	RelationCopyStorage(RelationGetSmgr(rel), dstrel, MAIN_FORKNUM,
						rel->rd_rel->relpersistence);
	for (ForkNumber fork = MAIN_FORKNUM + 1; fork <= MAX_FORKNUM; fork++)
	{
		if (!smgrexists(RelationGetSmgr(rel), fork))
			continue;
		smgrcreate(dstrel, fork, false);
		if (RelationIsPermanent(rel) ||
			(rel->rd_rel->relpersistence == RELPERSISTENCE_UNLOGGED &&
			 fork == INIT_FORKNUM))
			log_smgrcreate(newrnode, fork);
		RelationCopyStorage(RelationGetSmgr(rel), dstrel, fork,
							rel->rd_rel->relpersistence);
	}
	RelationDropStorage(rel);
	smgrclose(dstrel);
}

/* ----------------------------------------------------------------
 * Table rewrites (CLUSTER, VACUUM FULL)
 * ----------------------------------------------------------------
 */

/*
 * Appends records to a new relation.  Pages are filled in local memory and
 * written whole, past shared buffers, one WAL record (a full image) per
 * page, as heap's rewrite writes (MinidbBulkWriter, pg_compat.h): no buffer
 * lock is held while the next record is prepared (re-toasting reads and
 * writes TOAST tables), and rewriting a large table does not push the
 * rest of shared buffers out.
 */
typedef struct RewriteWriter
{
	Relation	rel;
	MinidbBulkWriter bulk;
	BlockNumber nblocks;		/* pages written */
	bool		has_page;
	PGAlignedBlock page;
} RewriteWriter;

static void
rewrite_flush(RewriteWriter *rw)
{
	if (!rw->has_page)
		return;
	minidb_bulk_write(&rw->bulk, rw->nblocks, rw->page.data);
	RecordPageWithFreeSpace(rw->rel, rw->nblocks,
							minidb_page_free_for_insert((Page) rw->page.data));
	rw->nblocks++;
	rw->has_page = false;
}

/* A page takes records while it keeps the fillfactor's room, as heap's */
static void
rewrite_add(RewriteWriter *rw, const char *rec, uint32 len)
{
	Size		keep_free = RelationGetTargetPageFreeSpace(rw->rel,
														   HEAP_DEFAULT_FILLFACTOR);

	if (rw->has_page &&
		!minidb_page_room_for_insert((Page) rw->page.data,
									 minidb_page_record_room(rec, len) +
									 keep_free))
		rewrite_flush(rw);
	if (!rw->has_page)
	{
		minidb_page_init((Page) rw->page.data);
		MinidbPageGetOpaque((Page) rw->page.data)->md_flags |=
			MINIDB_PAGE_REWRITTEN;
		rw->has_page = true;
	}
	minidb_page_add_record((Page) rw->page.data, rec, len);
}

/*
 * Versions holding TOAST pointers are re-toasted into the new relation, as
 * heap's rewrite does: during CLUSTER the new table's pointers must name
 * values saved for it (the TOAST tables are then swapped by content, and
 * toast_save_datum keeps value OIDs, writing a value shared by several
 * versions once).  Returns rec itself when no version has external values.
 */
static char *
retoast_record(Relation newrel, char *rec, uint32 *len, ItemPointer tid)
{
	MinidbVersionData *versions;
	MinidbChainError err;
	bool		any = false;
	int			format = minidb_record_format_of(rec);
	char	   *out;
	uint32		size;
	int			n;

	n = minidb_chain_decode_all(rec, *len, &versions, &err);
	if (n < 0)
		minidb_report_corruption(newrel, tid, &err);
	for (int i = 0; i < n; i++)
	{
		MinidbTupleBuf buf;
		HeapTuple	tup;
		HeapTuple	toasted;
		uint16		keep;

		if (versions[i].flags & MINIDB_V_HASEXTERNAL)
		{
			any = true;
			minidb_tuplebuf_init(&buf, CurrentMemoryContext);
			tup = minidb_materialize_data(&buf, &versions[i],
										  InvalidTransactionId, tid,
										  RelationGetRelid(newrel));
			toasted = heap_toast_insert_or_update(newrel, tup, NULL,
												  HEAP_INSERT_NO_LOGICAL);
			keep = versions[i].flags & (MINIDB_V_HINT_MASK | MINIDB_V_NODATA_MASK);
			minidb_version_from_tuple(toasted, versions[i].xmin,
									  versions[i].cid, &versions[i]);
			versions[i].flags |= keep;
		}
	}
	if (!any)
		return rec;

	/* rebuild in the record's format, with its record-level fields */
	size = MAXALIGN(minidb_record_from_versions(NULL, 0, versions, n, format,
												rec));
	out = palloc(size);
	*len = minidb_record_from_versions(out, size, versions, n, format, rec);
	return out;
}

typedef struct RewriteState
{
	TransactionId oldest_xmin;
	TransactionId freeze_cutoff;
	RewriteWriter writer;
	BufferAccessStrategy read_strategy; /* the old table's pass in block
										 * order: a bulk-read ring */
	Buffer		pin;
	MemoryContext cxt;			/* reset per record */
	double		num_tuples;
	double		tups_vacuumed;
	double		tups_recently_dead;
} RewriteState;

/*
 * pg_stat_progress_cluster, as heapam_relation_copy_for_cluster reports
 * it when it copies in index order or for VACUUM FULL: every record copied
 * is a row scanned and a row written (records no snapshot needs are not
 * counted, as heap counts no dead tuples).
 */
static void
progress_copied(double num_tuples)
{
	const int	index[] = {
		PROGRESS_CLUSTER_HEAP_TUPLES_SCANNED,
		PROGRESS_CLUSTER_HEAP_TUPLES_WRITTEN
	};
	int64		val[2];

	val[0] = val[1] = (int64) num_tuples;
	pgstat_progress_update_multi_param(2, index, val);
}

/* Copy the record at tid, pruned, frozen and re-toasted, to the new table */
static void
rewrite_record(Relation old, ItemPointer tid, RewriteState *rs)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(rs->cxt);
	MinidbViewStatus status;
	uint32		len;
	int			nkept;
	char	   *rec;

	rec = minidb_copy_record(old, tid, &rs->pin, rs->cxt, &len, &status);
	if (rec != NULL)
	{
		len = minidb_rewrite_record(rec, len, rs->oldest_xmin,
									rs->freeze_cutoff, &nkept);
		if (len == 0)
			rs->tups_vacuumed += 1;
		else
		{
			/*
			 * The rewrite writes every record in the current format, and a
			 * V1 or V2 record in V3 when it would not fit an empty page
			 * with its own format's reserve (added before that reserve was
			 * counted for new records: see minidb_page_record_room).
			 */
			if ((minidb_record_format_of(rec) != minidb_record_format &&
				 minidb_record_format == MINIDB_FORMAT_V3) ||
				minidb_page_record_room(rec, len) > MINIDB_PAGE_ROOM_MAX)
			{
				uint32		size = minidb_record_rewrite_as(NULL, 0, rec, len,
															 MINIDB_FORMAT_V3);
				char	   *conv = palloc(MAXALIGN(size));

				len = minidb_record_rewrite_as(conv, MAXALIGN(size), rec, len,
											   MINIDB_FORMAT_V3);
				rec = conv;
			}
			rec = retoast_record(rs->writer.rel, rec, &len, tid);
			rewrite_add(&rs->writer, rec, len);
			rs->num_tuples += 1;
			rs->tups_recently_dead += nkept - 1;
			progress_copied(rs->num_tuples);
		}
	}
	MemoryContextSwitchTo(oldcxt);
	MemoryContextReset(rs->cxt);
}

/* Every record, in index order (CLUSTER) */
static void
rewrite_in_index_order(Relation old, Relation index, RewriteState *rs)
{
	IndexScanDesc iscan;
	HASHCTL		ctl;
	HTAB	   *seen;
	ItemPointer tid;
	const int	progress_index[] = {
		PROGRESS_CLUSTER_PHASE,
		PROGRESS_CLUSTER_INDEX_RELID
	};
	int64		progress_val[2];

	progress_val[0] = PROGRESS_CLUSTER_PHASE_INDEX_SCAN_HEAP;
	progress_val[1] = RelationGetRelid(index);
	pgstat_progress_update_multi_param(2, progress_index, progress_val);

	iscan = minidb_index_beginscan(old, index, SnapshotAny, 0, 0);

	ctl.keysize = sizeof(ItemPointerData);
	ctl.entrysize = sizeof(ItemPointerData);
	ctl.hcxt = CurrentMemoryContext;
	seen = hash_create("minidb cluster TIDs", 1024, &ctl,
					   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	index_rescan(iscan, NULL, 0, NULL, 0);
	while ((tid = index_getnext_tid(iscan, ForwardScanDirection)) != NULL)
	{
		bool		found;

		CHECK_FOR_INTERRUPTS();
		hash_search(seen, tid, HASH_ENTER, &found);
		if (!found)
			rewrite_record(old, tid, rs);
	}
	index_endscan(iscan);
	hash_destroy(seen);
}

/*
 * The newest data version of the record rec as a heap tuple with t_self
 * tid (allocated in the current context), or NULL if it has none
 */
static HeapTuple
record_newest_tuple(Relation rel, char *rec, uint32 len, ItemPointer tid)
{
	MinidbChainIter it;
	MinidbChainError err;
	MinidbVersionRef ref;
	MinidbVersionData v;
	MinidbDeltaBuf delta = {0};
	bool		damaged = false;
	HeapTuple	tup;
	Size		tlen;

	if (!minidb_chain_iter_init(&it, rec, len, &err))
		return NULL;
	while (minidb_chain_iter_next(&it, &ref, &err, &damaged))
	{
		if (ref.vh->vh_flags & MINIDB_V_NODATA_MASK)
			continue;
		minidb_version_get_buf(rec, &ref, &v, &delta);
		tlen = minidb_materialized_size(&v);
		tup = (HeapTuple) palloc0(HEAPTUPLESIZE + tlen);
		tup->t_data = (HeapTupleHeader) ((char *) tup + HEAPTUPLESIZE);
		tup->t_len = tlen;
		tup->t_self = *tid;
		tup->t_tableOid = RelationGetRelid(rel);
		minidb_write_tuple(tup->t_data, &v, InvalidTransactionId, tid);
		return tup;
	}
	return NULL;
}

/* The progress report of a rewrite's pass over the old table */
static void
start_rewrite_scan(BlockNumber nblocks)
{
	pgstat_progress_update_param(PROGRESS_CLUSTER_PHASE,
								 PROGRESS_CLUSTER_PHASE_SEQ_SCAN_HEAP);
	pgstat_progress_update_param(PROGRESS_CLUSTER_TOTAL_HEAP_BLKS, nblocks);
}

/*
 * One block of that pass: read through the bulk-read ring, as heap's
 * sequential scan of a large table reads, reported, checked, and its line
 * pointer count returned; the records are then read one by one
 * (minidb_copy_record, which finds the block in its buffer).
 */
static OffsetNumber
scan_rewrite_block(Relation old, BlockNumber blkno, RewriteState *rs)
{
	Buffer		buffer = ReadBufferExtended(old, MAIN_FORKNUM, blkno,
											RBM_NORMAL, rs->read_strategy);
	OffsetNumber maxoff;

	CHECK_FOR_INTERRUPTS();
	pgstat_progress_update_param(PROGRESS_CLUSTER_HEAP_BLKS_SCANNED,
								 blkno + 1);
	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	minidb_page_check(old, buffer);
	maxoff = minidb_page_maxoff(BufferGetPage(buffer));
	UnlockReleaseBuffer(buffer);
	return maxoff;
}

/*
 * Every record, in the order of index's keys, sorted as heap's CLUSTER
 * sorts when the planner prefers a sequential scan and a sort (use_sort):
 * each record that survives goes into tuplesort_begin_cluster's sort as
 * its newest version (an in-place UPDATE never changes an indexed column,
 * so every version of a record has the same keys), in table order, so
 * rows of equal keys come out in the order heap's sort gives them.
 */
static void
rewrite_in_sort_order(Relation old, Relation index, RewriteState *rs)
{
	Tuplesortstate *sort;
	BlockNumber nblocks = RelationGetNumberOfBlocks(old);
	HeapTuple	tup;
	double		n = 0;

	sort = tuplesort_begin_cluster(RelationGetDescr(old), index,
								   maintenance_work_mem, NULL,
								   TUPLESORT_NONE);
	start_rewrite_scan(nblocks);
	for (BlockNumber blkno = 0; blkno < nblocks; blkno++)
	{
		OffsetNumber maxoff = scan_rewrite_block(old, blkno, rs);

		for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off++)
		{
			MemoryContext oldcxt = MemoryContextSwitchTo(rs->cxt);
			MinidbViewStatus status;
			ItemPointerData tid;
			uint32		len;
			int			nkept;
			char	   *rec;

			ItemPointerSet(&tid, blkno, off);
			rec = minidb_copy_record(old, &tid, &rs->pin, rs->cxt, &len,
									 &status);
			tup = NULL;
			if (rec != NULL)
			{
				len = minidb_rewrite_record(rec, len, rs->oldest_xmin,
											rs->freeze_cutoff, &nkept);
				if (len == 0)
					rs->tups_vacuumed += 1;
				else
					tup = record_newest_tuple(old, rec, len, &tid);
			}
			if (tup != NULL)
			{
				tuplesort_putheaptuple(sort, tup);
				n += 1;
				pgstat_progress_update_param(PROGRESS_CLUSTER_HEAP_TUPLES_SCANNED,
											 (int64) n);
			}
			MemoryContextSwitchTo(oldcxt);
			MemoryContextReset(rs->cxt);
		}
	}

	pgstat_progress_update_param(PROGRESS_CLUSTER_PHASE,
								 PROGRESS_CLUSTER_PHASE_SORT_TUPLES);
	tuplesort_performsort(sort);
	pgstat_progress_update_param(PROGRESS_CLUSTER_PHASE,
								 PROGRESS_CLUSTER_PHASE_WRITE_NEW_HEAP);
	while ((tup = tuplesort_getheaptuple(sort, true)) != NULL)
	{
		ItemPointerData tid = tup->t_self;

		CHECK_FOR_INTERRUPTS();
		rewrite_record(old, &tid, rs);
	}
	tuplesort_end(sort);
}

/* Every record, in physical order (VACUUM FULL) */
static void
rewrite_in_table_order(Relation old, RewriteState *rs)
{
	BlockNumber nblocks = RelationGetNumberOfBlocks(old);

	start_rewrite_scan(nblocks);
	for (BlockNumber blkno = 0; blkno < nblocks; blkno++)
	{
		OffsetNumber maxoff = scan_rewrite_block(old, blkno, rs);

		for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off++)
		{
			ItemPointerData tid;

			ItemPointerSet(&tid, blkno, off);
			rewrite_record(old, &tid, rs);
		}
	}
}

/*
 * CLUSTER and VACUUM FULL: copy every record a snapshot may still need,
 * keeping its versions' xids (recently dead versions stay in the chain, as
 * heap keeps recently dead tuples), dropping what no snapshot older than
 * OldestXmin can see and freezing versions older than *xid_cutoff.  With
 * an index the records go in index order.  Moved markers lose their
 * successor TID: it pointed into the old relation, and nothing that could
 * follow it survives the AccessExclusiveLock the rewrite holds.
 */
void
minidb_relation_copy_for_cluster(Relation OldTable, Relation NewTable,
								 Relation OldIndex, bool use_sort,
								 TransactionId OldestXmin,
								 TransactionId *xid_cutoff,
								 MultiXactId *multi_cutoff,
								 double *num_tuples, double *tups_vacuumed,
								 double *tups_recently_dead)
{
	RewriteState rs = {0};

	rs.oldest_xmin = OldestXmin;
	rs.freeze_cutoff = *xid_cutoff;
	rs.writer.rel = NewTable;
	minidb_bulk_start(&rs.writer.bulk, NewTable);
	rs.writer.nblocks = 0;
	rs.read_strategy = GetAccessStrategy(BAS_BULKREAD);
	rs.writer.has_page = false;
	rs.pin = InvalidBuffer;
	rs.cxt = AllocSetContextCreate(CurrentMemoryContext, "minidb rewrite",
								   ALLOCSET_DEFAULT_SIZES);

	if (OldIndex != NULL && use_sort)
		rewrite_in_sort_order(OldTable, OldIndex, &rs);
	else if (OldIndex != NULL)
		rewrite_in_index_order(OldTable, OldIndex, &rs);
	else
		rewrite_in_table_order(OldTable, &rs);
	rewrite_flush(&rs.writer);
	minidb_bulk_finish(&rs.writer.bulk);
	FreeAccessStrategy(rs.read_strategy);
	if (BufferIsValid(rs.pin))
		ReleaseBuffer(rs.pin);
	MemoryContextDelete(rs.cxt);

	*num_tuples = rs.num_tuples;
	*tups_vacuumed = rs.tups_vacuumed;
	*tups_recently_dead = rs.tups_recently_dead;
}

/* The same rule as heap: could a row ever exceed TOAST_TUPLE_THRESHOLD? */
bool
minidb_relation_needs_toast_table(Relation rel)
{
	TupleDesc	tupdesc = rel->rd_att;
	int32		data_length = 0;
	bool		maxlength_unknown = false;
	bool		has_toastable_attrs = false;
	int32		tuple_length;

	for (int i = 0; i < tupdesc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(tupdesc, i);

		if (att->attisdropped)
			continue;
		data_length = att_align_nominal(data_length, att->attalign);
		if (att->attlen > 0)
			data_length += att->attlen;
		else
		{
			int32		maxlen = type_maximum_size(att->atttypid,
												   att->atttypmod);

			if (maxlen < 0)
				maxlength_unknown = true;
			else
				data_length += maxlen;
			if (att->attstorage != TYPSTORAGE_PLAIN)
				has_toastable_attrs = true;
		}
	}
	if (!has_toastable_attrs)
		return false;
	if (maxlength_unknown)
		return true;
	tuple_length = MAXALIGN(SizeofHeapTupleHeader + BITMAPLEN(tupdesc->natts)) +
		MAXALIGN(data_length);
	return tuple_length > TOAST_TUPLE_THRESHOLD;
}

/* ----------------------------------------------------------------
 * Rows near the page size
 * ----------------------------------------------------------------
 */

/* Length of the one-version record that would hold tup */
uint64
minidb_tuple_record_len(HeapTuple tup)
{
	MinidbVersionData v;

	minidb_version_from_tuple(tup, InvalidTransactionId, 0, &v);
	return minidb_record_size(&v, 1, minidb_record_format);
}

/* May column att's value be compressed or moved out of line here, pass? */
static bool
fit_candidate(Form_pg_attribute att, Datum value, int pass, bool has_toast)
{
	struct varlena *ptr = (struct varlena *) DatumGetPointer(value);
	bool		plain = (att->attstorage == TYPSTORAGE_PLAIN);

	if (VARATT_IS_EXTERNAL(ptr) ||
		VARSIZE_ANY(ptr) <= MAXALIGN(TOAST_POINTER_SIZE))
		return false;
	switch (pass)
	{
		case 1:					/* heap's last pass, to our limit */
			return !plain && has_toast;
		case 2:					/* SET STORAGE PLAIN: compress */
			return plain && !VARATT_IS_COMPRESSED(ptr) &&
				TypeIsToastable(att->atttypid);
		default:				/* SET STORAGE PLAIN: out of line */
			return plain && has_toast && TypeIsToastable(att->atttypid);
	}
}

/*
 * Make tup fit a minidb page if heap's toaster left it too big for one.
 *
 * heap_toast_insert_or_update works to heap's limits: it leaves MAIN values
 * inline while the tuple fits a heap page (TOAST_TUPLE_TARGET_MAIN), and
 * never touches PLAIN columns.  A minidb record carries more header than a
 * heap tuple, and a page keeps a marker reserve and a special area, so a
 * tuple that heap just fits may be too big for us.  Then, and only then,
 * we go on, biggest value first, until the record fits:
 *	 1. values of non-PLAIN columns still inline go out of line (heap's last
 *		pass, to our limit);
 *	 2. values of PLAIN columns whose type is toastable (a column SET
 *		STORAGE PLAIN) are compressed;
 *	 3. the same go out of line.
 * A type whose own storage is PLAIN is never touched.  Every reader of a
 * toastable type copes with 2 and 3: heap's PLAIN columns hold compressed
 * values too (copied from elsewhere), and readers detoast what they read.
 * Rows below heap's limits are stored exactly as heap stores them, so
 * pg_column_size() and pg_column_compression() agree with heap there.
 *
 * Returns tup itself when nothing changed; otherwise a new tuple (tup is
 * left to the caller).  A tuple heap would refuse (longer than
 * MaxHeapTupleSize after heap's toaster) gets heap's error.  If nothing
 * helps, the record stays too big and the caller reports "row is too big"
 * with minidb's limit: rows of values that cannot be toasted (fixed-width
 * or PLAIN types) hold up to 48 bytes less than heap's.
 */
HeapTuple
minidb_toast_to_fit(Relation rel, HeapTuple tup, int options)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			natts = desc->natts;
	bool		has_toast = OidIsValid(rel->rd_rel->reltoastrelid);
	HeapTuple	result = tup;
	Datum	   *values;
	bool	   *isnull;
	bool	   *mine;
	bool	   *tried;

	/* a row heap refuses, we refuse with heap's words */
	if (MAXALIGN(tup->t_len) > MaxHeapTupleSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("row is too big: size %zu, maximum size %zu",
						MAXALIGN(tup->t_len), MaxHeapTupleSize)));
	if (minidb_tuple_record_len(tup) <=
		minidb_max_record_len(minidb_record_format))
		return tup;
	values = palloc(natts * sizeof(Datum));
	isnull = palloc(natts * sizeof(bool));
	mine = palloc0(natts * sizeof(bool));
	tried = palloc0(natts * sizeof(bool));
	heap_deform_tuple(tup, desc, values, isnull);

	for (int pass = 1; pass <= 3; pass++)
	{
		for (;;)
		{
			int			biggest = -1;
			Size		biggest_size = 0;
			Form_pg_attribute att;
			Datum		newval;
			HeapTuple	formed;

			for (int i = 0; i < natts; i++)
			{
				att = TupleDescAttr(desc, i);
				if (isnull[i] || att->attlen != -1 || att->attisdropped ||
					(pass == 2 && tried[i]) ||
					!fit_candidate(att, values[i], pass, has_toast))
					continue;
				if (VARSIZE_ANY(DatumGetPointer(values[i])) > biggest_size)
				{
					biggest = i;
					biggest_size = VARSIZE_ANY(DatumGetPointer(values[i]));
				}
			}
			if (biggest < 0)
				break;
			att = TupleDescAttr(desc, biggest);
			if (pass == 2)
			{
				tried[biggest] = true;
				newval = toast_compress_datum(values[biggest],
											  att->attcompression);
				if (DatumGetPointer(newval) == NULL)
					continue;	/* does not compress */
			}
			else
				newval = toast_save_datum(rel, values[biggest], NULL, options);
			if (mine[biggest])
				pfree(DatumGetPointer(values[biggest]));
			values[biggest] = newval;
			mine[biggest] = true;

			formed = heap_form_tuple(desc, values, isnull);
			formed->t_self = tup->t_self;
			formed->t_tableOid = tup->t_tableOid;
			if (result != tup)
				heap_freetuple(result);
			result = formed;
			if (minidb_tuple_record_len(result) <=
				minidb_max_record_len(minidb_record_format))
				goto done;
		}
	}
done:
	for (int i = 0; i < natts; i++)
		if (mine[i])
			pfree(DatumGetPointer(values[i]));
	pfree(values);
	pfree(isnull);
	pfree(mine);
	pfree(tried);
	return result;
}

void
minidb_relation_estimate_size(Relation rel, int32 *attr_widths,
							  BlockNumber *pages, double *tuples,
							  double *allvisfrac)
{
	/*
	 * Per row: a V3 record's header and version header (16 bytes before
	 * the data), a line pointer and the room the page keeps for the row's
	 * end: 28 bytes, heap's 24-byte tuple header and line pointer.
	 */
	const Size	overhead = 2 * MINIDB_SLOT_RESERVE + sizeof(ItemIdData) +
		MINIDB_SLOT_RESERVE;
	const Size	usable = BLCKSZ - SizeOfPageHeaderData -
		MAXALIGN(sizeof(MinidbPageOpaqueData));

	table_block_relation_estimate_size(rel, attr_widths, pages, tuples,
									   allvisfrac, overhead, usable);
}

/* ----------------------------------------------------------------
 * Index builds
 * ----------------------------------------------------------------
 */

/* What one record contributes to an index being built */
typedef struct BuildCandidate
{
	ItemPointerData tid;
	HeapTuple	tuple;
	bool		alive;
} BuildCandidate;

typedef struct BuildState
{
	Relation	rel;
	IndexInfo  *index_info;
	Bitmapset  *index_attrs;	/* NULL: compare every column */
	Snapshot	snapshot;		/* SnapshotAny, or an MVCC snapshot */
	TransactionId oldest_xmin;	/* with SnapshotAny */
	bool		anyvisible;
	BuildCandidate cands[MaxHeapTuplesPerPage];
	int			ncands;
} BuildState;

/* Columns the index reads; NULL when expressions make it "all of them" */
static Bitmapset *
index_columns(IndexInfo *ii)
{
	Bitmapset  *attrs = NULL;

	if (ii->ii_Expressions != NIL || ii->ii_Predicate != NIL)
		return NULL;
	for (int i = 0; i < ii->ii_NumIndexAttrs; i++)
		attrs = bms_add_member(attrs, ii->ii_IndexAttrNumbers[i]);
	return attrs;
}

/* Do two versions agree on the index's columns? */
static bool
same_index_values(BuildState *bs, HeapTuple a, HeapTuple b)
{
	TupleDesc	desc = RelationGetDescr(bs->rel);

	for (int attnum = 1; attnum <= desc->natts; attnum++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, attnum - 1);
		bool		n1;
		bool		n2;
		Datum		d1;
		Datum		d2;

		if (bs->index_attrs && !bms_is_member(attnum, bs->index_attrs))
			continue;
		d1 = heap_getattr(a, attnum, desc, &n1);
		d2 = heap_getattr(b, attnum, desc, &n2);
		if (n1 != n2 ||
			(!n1 && !datumIsEqual(d1, d2, att->attbyval, att->attlen)))
			return false;
	}
	return true;
}

/* Is vh committed and older than every snapshot (build's horizon)? */
static bool
seen_by_all(MinidbVersionHeader *vh, TransactionId oldest_xmin, Buffer buffer)
{
	if (vh->vh_flags & MINIDB_V_FROZEN)
		return true;
	return minidb_xid_committed(vh, buffer) &&
		TransactionIdPrecedes(vh->vh_xmin, oldest_xmin);
}

/*
 * With SnapshotAny: the row version to index for a record (NULL if the
 * record is dead to everyone), noting a broken chain when versions that
 * some snapshot may still see disagree on the index's columns.
 */
static HeapTuple
build_candidate_any(BuildState *bs, ItemPointer tid, char *rec, uint32 len,
					Buffer buffer, bool *alive)
{
	MinidbVersionWalk walk;
	MinidbVersionRef ref;
	bool		head_seen = false;
	bool		floor_found = false;
	HeapTuple	chosen = NULL;
	Oid			relid = RelationGetRelid(bs->rel);

	*alive = true;
	minidb_walk_begin(&walk, bs->rel, tid, rec, len);
	while (!floor_found && minidb_walk_next(&walk, &ref))
	{
		MinidbVersionHeader *vh = ref.vh;

		if (minidb_xid_aborted(vh, buffer))
			continue;
		floor_found = seen_by_all(vh, bs->oldest_xmin, buffer);
		if (!head_seen)
		{
			head_seen = true;
			if (vh->vh_flags & MINIDB_V_NODATA_MASK)
			{
				if (floor_found)
					return NULL;	/* dead to everyone */
				*alive = false; /* recently dead, or being deleted */
				continue;
			}
		}
		if (vh->vh_flags & MINIDB_V_NODATA_MASK)
			continue;
		if (chosen == NULL)
			chosen = minidb_materialize_copy(rec, &ref, InvalidTransactionId,
											 tid, relid);
		else if (!bs->index_info->ii_BrokenHotChain)
		{
			HeapTuple	older = minidb_materialize_copy(rec, &ref,
														InvalidTransactionId,
														tid, relid);

			if (!same_index_values(bs, chosen, older))
				bs->index_info->ii_BrokenHotChain = true;
		}
	}
	return chosen;
}

/* Under the page lock: pick each record's version for the index */
static void
build_collect_page(BuildState *bs, Buffer buffer)
{
	Page		page = BufferGetPage(buffer);
	OffsetNumber maxoff;
	Oid			relid = RelationGetRelid(bs->rel);

	bs->ncands = 0;
	minidb_page_check(bs->rel, buffer);
	maxoff = minidb_page_maxoff(page);
	for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off++)
	{
		BuildCandidate *c = &bs->cands[bs->ncands];
		char	   *rec;
		uint32		len;

		rec = minidb_page_record(bs->rel, buffer, off, &len);
		if (rec == NULL)
			continue;
		ItemPointerSet(&c->tid, BufferGetBlockNumber(buffer), off);
		c->alive = true;
		if (bs->snapshot == SnapshotAny && !bs->anyvisible)
			c->tuple = build_candidate_any(bs, &c->tid, rec, len, buffer,
										   &c->alive);
		else
		{
			MinidbVersionRef ref;

			c->tuple = NULL;
			if (minidb_find_visible(bs->rel, &c->tid, rec, len, bs->snapshot,
									buffer, &ref, NULL) >= 0)
				c->tuple = minidb_materialize_copy(rec, &ref,
												   InvalidTransactionId,
												   &c->tid, relid);
		}
		if (c->tuple)
			bs->ncands++;
	}
}

/* Feed one candidate to the index AM */
static void
build_index_candidate(BuildState *bs, BuildCandidate *c, Relation index_rel,
					  TupleTableSlot *slot, EState *estate,
					  ExprState *predicate, IndexBuildCallback callback,
					  void *callback_state)
{
	ExprContext *econtext = GetPerTupleExprContext(estate);
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];

	ExecStoreHeapTuple(c->tuple, slot, false);
	if (predicate != NULL && !ExecQual(predicate, econtext))
		return;
	FormIndexDatum(bs->index_info, slot, estate, values, isnull);
	callback(index_rel, &c->tid, values, isnull, c->alive, callback_state);
}

double
minidb_index_build_range_scan(Relation table_rel, Relation index_rel,
							  IndexInfo *index_info, bool allow_sync,
							  bool anyvisible, bool progress,
							  BlockNumber start_blockno,
							  BlockNumber numblocks,
							  IndexBuildCallback callback,
							  void *callback_state, TableScanDesc sscan)
{
	BuildState *bs = palloc0(sizeof(BuildState));
	EState	   *estate = CreateExecutorState();
	ExprContext *econtext = GetPerTupleExprContext(estate);
	TupleTableSlot *slot = table_slot_create(table_rel, NULL);
	ExprState  *predicate;
	MemoryContext pagecxt;
	MinidbScanDesc scan;
	bool		own_scan = (sscan == NULL);
	bool		unregister = false;
	double		reltuples = 0;
	BlockNumber blocks_done = 0;

	econtext->ecxt_scantuple = slot;
	predicate = ExecPrepareQual(index_info->ii_Predicate, estate);
	bs->rel = table_rel;
	bs->index_info = index_info;
	bs->index_attrs = index_columns(index_info);
	bs->anyvisible = anyvisible;
	if (!index_info->ii_Concurrent)
		bs->oldest_xmin = GetOldestNonRemovableTransactionId(table_rel);

	if (own_scan)
	{
		Snapshot	snapshot = SnapshotAny;

		if (!TransactionIdIsValid(bs->oldest_xmin))
		{
			snapshot = RegisterSnapshot(GetTransactionSnapshot());
			unregister = true;
		}
		sscan = table_beginscan_strat(table_rel, snapshot, 0, NULL, true,
									  allow_sync);
	}
	scan = (MinidbScanDesc) sscan;
	bs->snapshot = sscan->rs_snapshot;
	if (!allow_sync || start_blockno != 0 || numblocks != InvalidBlockNumber)
	{
		scan->startblock = start_blockno;
		scan->numblocks = numblocks;
	}
	if (progress)
		pgstat_progress_update_param(PROGRESS_SCAN_BLOCKS_TOTAL, scan->nblocks);

	pagecxt = AllocSetContextCreate(CurrentMemoryContext,
									"minidb index build page",
									ALLOCSET_DEFAULT_SIZES);
	for (;;)
	{
		BlockNumber blkno = minidb_scan_advance_block(scan, ForwardScanDirection);
		Buffer		buffer;
		MemoryContext oldcxt;

		if (blkno == InvalidBlockNumber)
			break;
		CHECK_FOR_INTERRUPTS();
		oldcxt = MemoryContextSwitchTo(pagecxt);
		buffer = ReadBufferExtended(table_rel, MAIN_FORKNUM, blkno,
									RBM_NORMAL, scan->strategy);
		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		build_collect_page(bs, buffer);
		UnlockReleaseBuffer(buffer);

		/*
		 * The candidates live in pagecxt, but the index AM's callback runs
		 * in the caller's context, as heap's does: BRIN's opclasses copy
		 * the range's summary values into CurrentMemoryContext and keep
		 * them across pages.
		 */
		MemoryContextSwitchTo(oldcxt);
		for (int i = 0; i < bs->ncands; i++)
		{
			build_index_candidate(bs, &bs->cands[i], index_rel, slot, estate,
								  predicate, callback, callback_state);
			ResetExprContext(econtext);
			reltuples += 1;
			/* heap's build reads rows with heap_getnext, which counts them */
			pgstat_count_heap_getnext(table_rel);
		}
		MemoryContextReset(pagecxt);
		if (progress)
			pgstat_progress_update_param(PROGRESS_SCAN_BLOCKS_DONE,
										 ++blocks_done);
	}
	MemoryContextDelete(pagecxt);

	table_endscan(sscan);
	if (unregister)
		UnregisterSnapshot(bs->snapshot);
	ExecDropSingleTupleTableSlot(slot);
	FreeExecutorState(estate);
	index_info->ii_ExpressionsState = NIL;
	index_info->ii_PredicateState = NULL;
	return reltuples;
}

/* Advance the sorted index TIDs to the first one >= tid; true if equal */
static bool
index_has_tid(ValidateIndexState *state, ItemPointer cursor, bool *exhausted,
			  ItemPointer tid)
{
	while (!*exhausted &&
		   (!ItemPointerIsValid(cursor) || ItemPointerCompare(cursor, tid) < 0))
	{
		Datum		val;
		bool		isnull;

		if (!minidb_tuplesort_getdatum(state->tuplesort, true, &val, &isnull))
			*exhausted = true;
		else
			itemptr_decode(cursor, DatumGetInt64(val));
	}
	return !*exhausted && ItemPointerEquals(cursor, tid);
}

/*
 * CREATE INDEX CONCURRENTLY, phase 3: every row visible to snapshot whose
 * TID the index lacks gets its entry now.  Rows come out of the scan in
 * TID order, and so do the index's TIDs, so one merge pass suffices.  A
 * row updated in place since the build kept its TID and, by construction,
 * its indexed values (the new index's columns count as indexed from the
 * moment its catalog entry exists).
 */
void
minidb_index_validate_scan(Relation table_rel, Relation index_rel,
						   IndexInfo *index_info, Snapshot snapshot,
						   ValidateIndexState *state)
{
	EState	   *estate = CreateExecutorState();
	ExprContext *econtext = GetPerTupleExprContext(estate);
	TupleTableSlot *slot = table_slot_create(table_rel, NULL);
	ExprState  *predicate;
	TableScanDesc scan;
	ItemPointerData cursor;
	bool		exhausted = false;

	econtext->ecxt_scantuple = slot;
	predicate = ExecPrepareQual(index_info->ii_Predicate, estate);
	ItemPointerSetInvalid(&cursor);
	scan = table_beginscan_strat(table_rel, snapshot, 0, NULL, true, false);
	((MinidbScanDesc) scan)->by_age = false;	/* merged in TID order */
	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		Datum		values[INDEX_MAX_KEYS];
		bool		isnull[INDEX_MAX_KEYS];

		CHECK_FOR_INTERRUPTS();
		state->htups += 1;
		if (index_has_tid(state, &cursor, &exhausted, &slot->tts_tid))
			continue;
		if (predicate != NULL && !ExecQual(predicate, econtext))
			continue;
		FormIndexDatum(index_info, slot, estate, values, isnull);
		index_insert(index_rel, values, isnull, &slot->tts_tid, table_rel,
					 index_info->ii_Unique ? UNIQUE_CHECK_YES : UNIQUE_CHECK_NO,
					 false, index_info);
		state->tups_inserted += 1;
		ResetExprContext(econtext);
	}
	table_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	FreeExecutorState(estate);
	index_info->ii_ExpressionsState = NIL;
	index_info->ii_PredicateState = NULL;
}

/* ----------------------------------------------------------------
 * Index entry deletion (bottom-up and simple deletion in btree)
 * ----------------------------------------------------------------
 */

typedef struct DeleteCheck
{
	GlobalVisState *vistest;
	bool		dead;
	TransactionId latest;
} DeleteCheck;

static void
delete_check_cb(char *rec, uint32 len, Buffer buffer, void *arg)
{
	DeleteCheck *dc = (DeleteCheck *) arg;

	dc->dead = minidb_record_is_dead(rec, len, dc->vistest, buffer,
									 &dc->latest);
}

/*
 * An index entry may go when its record is dead to everyone: its head is
 * a tombstone or moved marker beyond the removal horizon, or every version
 * aborted.  In-place versions never need entries of their own, so this is
 * the only case.  Returns the newest xid that made an entry removable, for
 * recovery conflicts on standbys.
 */
TransactionId
minidb_index_delete_tuples(Relation rel, TM_IndexDeleteOp *delstate)
{
	TransactionId latest = InvalidTransactionId;
	GlobalVisState *vistest = GlobalVisTestFor(rel);
	Buffer		pin = InvalidBuffer;
	BlockNumber nblocks = RelationGetNumberOfBlocks(rel);
	int			kept = 0;

	for (int i = 0; i < delstate->ndeltids; i++)
	{
		TM_IndexDelete *del = &delstate->deltids[i];
		TM_IndexStatus *status = &delstate->status[del->id];
		DeleteCheck dc;

		dc.vistest = vistest;
		dc.dead = false;
		dc.latest = InvalidTransactionId;
		if (ItemPointerGetBlockNumber(&del->tid) < nblocks &&
			minidb_view_record(rel, &del->tid, &pin, delete_check_cb, &dc) ==
			MINIDB_VIEW_OK && dc.dead)
		{
			status->knowndeletable = true;
			if (TransactionIdIsValid(dc.latest) &&
				(!TransactionIdIsValid(latest) ||
				 TransactionIdFollows(dc.latest, latest)))
				latest = dc.latest;
		}
		if (status->knowndeletable)
			delstate->deltids[kept++] = *del;
	}
	delstate->ndeltids = kept;
	if (BufferIsValid(pin))
		ReleaseBuffer(pin);
	return latest;
}
