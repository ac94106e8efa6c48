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

extern bool minidb_record_is_dead(char *rec, uint32 len,
								  GlobalVisState *vistest, Buffer buffer,
								  TransactionId *latest_xid);
extern uint32 minidb_rewrite_record(char *rec, uint32 len,
									TransactionId oldest_xmin,
									TransactionId freeze_cutoff, int *nkept);
extern int	minidb_prune_plan(char *rec, uint32 len, GlobalVisState *vistest,
							  Buffer buffer, bool *keep, int *nversions,
							  int *floor);
extern int	minidb_prune_plan_write(char *rec, uint32 len,
									GlobalVisState *vistest, Buffer buffer,
									bool *keep, int *nversions,
									MinidbWritePlan *wp);
extern bool minidb_plan_page_prune(Page page, GlobalVisState *vistest,
								   Buffer buffer, MinidbPagePlan *plan);
extern void minidb_apply_plan(Relation rel, Buffer buffer,
							  const MinidbPagePlan *plan);
extern bool minidb_prune_buffer(Relation rel, Buffer buffer);
extern Size minidb_page_prunable_bytes(Page page, GlobalVisState *vistest,
									   Buffer buffer);

#endif							/* MINIDB_PRUNE_H */
