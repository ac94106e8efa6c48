/*-------------------------------------------------------------------------
 *
 * minidb_stats.c
 *	  How long are a table's chains, and how much of them is dead?
 *
 * minidb_stats(rel) reads every page of a minidb table (share lock, one
 * page at a time, through a bulk-read ring) and reports:
 *
 *	records			records (LP_NORMAL items)
 *	live_versions	versions some snapshot may still need: the versions a
 *					prune to the current horizon would keep, in records
 *					that are not dead
 *	dead_versions	all other versions: aborted, older than the newest
 *					version every snapshot sees, or in dead records
 *	chain_bytes		bytes of all records (headers included)
 *	depth_max, depth_p50, depth_p99
 *					versions per record (percentiles are
 *					percentile_disc-style: an actual depth)
 *	pages, free_bytes
 *					relation pages, and PageGetExactFreeSpace summed
 *
 * The horizon is GlobalVisTestFor(rel) now, the one VACUUM would prune to;
 * minidb_horizon() (sqlsrc/30_vacuum.sql) names what holds it back.
 *
 * The records are read in the shared buffer under a share lock, and the
 * visibility checks may set hint bits there, as any reader's do: through
 * minidb_set_hint with the buffer (MarkBufferDirtyHint, after heap's
 * commit-LSN check), never by writing the flags directly.  Only the owner
 * of the table (or a superuser) may call it; the owner is checked before
 * the table is locked (minidb_open_owned).
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/relation.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/acl.h"
#include "utils/snapmgr.h"

#include "chain.h"
#include "minidb_page.h"
#include "minidb_prune.h"
#include "minidb_am.h"

PG_FUNCTION_INFO_V1(minidb_stats);

static int
cmp_int(const void *a, const void *b)
{
	int			x = *(const int *) a;
	int			y = *(const int *) b;

	return (x > y) - (x < y);
}

/* percentile_disc: the smallest value with at least fraction p at or below */
static double
percentile_disc(const int *sorted, int64 n, double p)
{
	int64		idx;

	if (n == 0)
		return 0;
	idx = (int64) ceil(p * (double) n) - 1;
	if (idx < 0)
		idx = 0;
	if (idx >= n)
		idx = n - 1;
	return sorted[idx];
}

Datum
minidb_stats(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Relation	rel;
	TupleDesc	tupdesc;
	BufferAccessStrategy strategy;
	GlobalVisState *vistest;
	BlockNumber nblocks;
	int64		records = 0;
	int64		live = 0;
	int64		dead = 0;
	int64		bytes = 0;
	int64		free_bytes = 0;
	int			depth_max = 0;
	int		   *depths;
	int64		ndepths = 0;
	int64		depths_size = 1024;
	bool	   *keep = palloc(sizeof(bool) * MINIDB_MAX_VERSIONS);
	Datum		values[9];
	bool		nulls[9] = {0};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	rel = minidb_open_owned(relid, "minidb_stats");

	strategy = GetAccessStrategy(BAS_BULKREAD);
	vistest = GlobalVisTestFor(rel);
	nblocks = RelationGetNumberOfBlocks(rel);
	depths = palloc(sizeof(int) * depths_size);

	for (BlockNumber blkno = 0; blkno < nblocks; blkno++)
	{
		Buffer		buffer;
		Page		page;
		OffsetNumber maxoff;

		CHECK_FOR_INTERRUPTS();
		buffer = ReadBufferExtended(rel, MAIN_FORKNUM, blkno, RBM_NORMAL,
									strategy);
		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		minidb_page_check(rel, buffer);
		page = BufferGetPage(buffer);
		if (PageIsNew(page))
		{
			free_bytes += BLCKSZ - SizeOfPageHeaderData -
				MAXALIGN(sizeof(MinidbPageOpaqueData));
			UnlockReleaseBuffer(buffer);
			continue;
		}
		free_bytes += PageGetExactFreeSpace(page);
		maxoff = minidb_page_maxoff(page);
		for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off++)
		{
			char	   *rec;
			uint32		len;
			MinidbPruneResult rp;
			int			n;
			int			nkeep;

			rec = minidb_page_record(rel, buffer, off, &len);
			if (rec == NULL)
				continue;
			records++;
			bytes += len;
			nkeep = minidb_prune_plan(rec, len, vistest, buffer, keep, &rp);
			n = rp.nversions;
			if (nkeep < 0)
			{
				ItemPointerData tid;
				MinidbVersionWalk walk;
				MinidbVersionRef ref;

				/* name the damage, as a reader would */
				ItemPointerSet(&tid, blkno, off);
				minidb_walk_begin(&walk, rel, &tid, rec, len);
				while (minidb_walk_next(&walk, &ref))
					;
				continue;		/* not reached: the walk raised it */
			}
			/*
			 * A V3 record's end is not a version of its own (a V1 or V2
			 * marker is): it counts only when nothing else is left, as
			 * heap's LP_DEAD item does.
			 */
			if (minidb_record_has_end(rec))
			{
				if (n > 1)
				{
					n--;
					if (keep[0])
						nkeep--;
				}
			}
			if (minidb_record_is_dead(rec, len, vistest, buffer, NULL))
				dead += n;
			else
			{
				if (nkeep <= 0)
					nkeep = 1;
				live += nkeep;
				dead += n - nkeep;
			}
			if (n > depth_max)
				depth_max = n;
			if (ndepths == depths_size)
			{
				depths_size *= 2;
				depths = repalloc_huge(depths, sizeof(int) * depths_size);
			}
			depths[ndepths++] = n;
		}
		UnlockReleaseBuffer(buffer);
	}
	FreeAccessStrategy(strategy);
	relation_close(rel, AccessShareLock);

	qsort(depths, ndepths, sizeof(int), cmp_int);
	values[0] = Int64GetDatum(records);
	values[1] = Int64GetDatum(live);
	values[2] = Int64GetDatum(dead);
	values[3] = Int64GetDatum(bytes);
	values[4] = Int32GetDatum(depth_max);
	values[5] = Float8GetDatum(percentile_disc(depths, ndepths, 0.50));
	values[6] = Float8GetDatum(percentile_disc(depths, ndepths, 0.99));
	values[7] = Int64GetDatum((int64) nblocks);
	values[8] = Int64GetDatum(free_bytes);
	if (ndepths == 0)
	{
		nulls[5] = true;
		nulls[6] = true;
	}
	pfree(depths);
	pfree(keep);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values,
													  nulls)));
}
