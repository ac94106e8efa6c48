/*-------------------------------------------------------------------------
 *
 * minidb_vacuum.c
 *	  VACUUM for minidb tables.
 *
 * This first version prunes every chain to the removal horizon, keeps the
 * free space map current and reports statistics.  Dead records (a
 * committed tombstone or moved marker beyond the horizon) keep their line
 * pointer and index entries for now; removing them together with their
 * index entries, freezing and the visibility map come with the VACUUM
 * work item.
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/multixact.h"
#include "access/transam.h"
#include "commands/progress.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/freespace.h"
#include "utils/snapmgr.h"

#include "minidb_am.h"

typedef struct VacuumCounts
{
	BlockNumber pages;
	double		live_records;
	double		dead_records;
	double		versions_pruned;
} VacuumCounts;

/* Count the records of a pruned page as live or dead */
static void
count_records(Page page, GlobalVisState *vistest, VacuumCounts *counts)
{
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);

	for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off++)
	{
		ItemId		lp = PageGetItemId(page, off);

		if (!ItemIdIsNormal(lp))
			continue;
		if (minidb_record_is_dead((char *) PageGetItem(page, lp),
								  ItemIdGetLength(lp), vistest,
								  InvalidBuffer, NULL))
			counts->dead_records += 1;
		else
			counts->live_records += 1;
	}
}

static void
vacuum_page(Relation rel, BlockNumber blkno, BufferAccessStrategy bstrategy,
			GlobalVisState *vistest, VacuumCounts *counts)
{
	Buffer		buffer = ReadBufferExtended(rel, MAIN_FORKNUM, blkno,
											RBM_NORMAL, bstrategy);
	MinidbPageWrite w;
	Page		page;
	Size		freespace;

	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	minidb_page_check(rel, buffer);
	if (PageIsNew(BufferGetPage(buffer)))
	{
		UnlockReleaseBuffer(buffer);
		return;
	}
	minidb_write_begin(&w, rel);
	page = minidb_write_page(&w, buffer, false);
	counts->versions_pruned += minidb_prune_page(rel, page, vistest);
	count_records(page, vistest, counts);
	freespace = minidb_page_free_for_insert(page);
	minidb_write_finish(&w);
	UnlockReleaseBuffer(buffer);
	RecordPageWithFreeSpace(rel, blkno, freespace);
}

void
minidb_relation_vacuum(Relation rel, struct VacuumParams *params,
					   BufferAccessStrategy bstrategy)
{
	GlobalVisState *vistest = GlobalVisTestFor(rel);
	BlockNumber nblocks = RelationGetNumberOfBlocks(rel);
	VacuumCounts counts = {0};

	pgstat_progress_start_command(PROGRESS_COMMAND_VACUUM,
								  RelationGetRelid(rel));
	pgstat_progress_update_param(PROGRESS_VACUUM_PHASE,
								 PROGRESS_VACUUM_PHASE_SCAN_HEAP);
	pgstat_progress_update_param(PROGRESS_VACUUM_TOTAL_HEAP_BLKS, nblocks);
	for (BlockNumber blkno = 0; blkno < nblocks; blkno++)
	{
		vacuum_delay_point();
		vacuum_page(rel, blkno, bstrategy, vistest, &counts);
		pgstat_progress_update_param(PROGRESS_VACUUM_HEAP_BLKS_SCANNED,
									 blkno + 1);
	}
	FreeSpaceMapVacuum(rel);

	vac_update_relstats(rel, nblocks, counts.live_records, 0,
						rel->rd_rel->relhasindex, InvalidTransactionId,
						InvalidMultiXactId, NULL, NULL, false);
	pgstat_report_vacuum(RelationGetRelid(rel), rel->rd_rel->relisshared,
						 (PgStat_Counter) counts.live_records,
						 (PgStat_Counter) (counts.dead_records +
										   counts.versions_pruned));
	ereport((params->options & VACOPT_VERBOSE) ? INFO : DEBUG2,
			(errmsg("minidb vacuum of \"%s\": %u pages, %.0f live records, %.0f dead records, %.0f versions pruned",
					RelationGetRelationName(rel), nblocks,
					counts.live_records, counts.dead_records,
					counts.versions_pruned)));
	pgstat_progress_end_command();
}
