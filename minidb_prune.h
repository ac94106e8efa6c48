/*-------------------------------------------------------------------------
 *
 * minidb_prune.h
 *	  Removing versions no snapshot can see: plans, and carrying them out.
 *
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef MINIDB_PRUNE_H
#define MINIDB_PRUNE_H

#include "utils/snapmgr.h"

#include "minidb_page.h"

/*
 * What the pruning rule finds for one record besides which versions stay
 * (minidb_prune_plan).  Page pruning, VACUUM and a write that prunes the
 * record it prepends to all carry out such a plan, and log it with this
 * horizon.
 */
typedef struct MinidbPruneResult
{
	int			nversions;		/* versions the walk found */
	int			floor;			/* the newest kept version every snapshot
								 * sees, or -1 */
	TransactionId horizon;		/* hot standby conflict of the plan: the
								 * floor's xmin when versions below it go,
								 * else invalid */
	TransactionId prune_xid;	/* xmin of the kept version just newer than
								 * the oldest kept one (after it commits and
								 * ages, more may go), else invalid */
	const char *head;			/* version 0's data on the page, NULL for a
								 * marker (a PREPEND's prefix and suffix) */
	uint32		headlen;
} MinidbPruneResult;

extern bool minidb_record_is_dead(char *rec, uint32 len,
								  GlobalVisState *vistest, Buffer buffer,
								  TransactionId *latest_xid);
extern uint32 minidb_rewrite_record(char *rec, uint32 len,
									TransactionId oldest_xmin,
									TransactionId freeze_cutoff, int *nkept);
extern int	minidb_prune_plan(char *rec, uint32 len, GlobalVisState *vistest,
							  Buffer buffer, bool *keep,
							  MinidbPruneResult *rp);
extern bool minidb_plan_page_prune(Page page, GlobalVisState *vistest,
								   Buffer buffer, MinidbPagePlan *plan);
extern void minidb_apply_plan(Relation rel, Buffer buffer,
							  const MinidbPagePlan *plan);
extern bool minidb_prune_buffer(Relation rel, Buffer buffer);
extern bool minidb_page_worth_pruning(Relation rel, Page page);
extern Size minidb_page_prunable_bytes(Page page, GlobalVisState *vistest,
									   Buffer buffer);

#endif							/* MINIDB_PRUNE_H */
