/*-------------------------------------------------------------------------
 *
 * chain_int.h
 *	  What chain.c and chain_v3.c share, and nobody else sees.
 *
 * chain.c holds the record API, dispatching on the record format, and the
 * V1 and V2 layouts; chain_v3.c the V3 layout.  Both report damage through
 * minidb_chain_set_error.
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef MINIDB_CHAIN_INT_H
#define MINIDB_CHAIN_INT_H

#include "chain.h"

/* Fill in *err (if any) and return false */
extern bool minidb_chain_set_error(MinidbChainError *err, int version,
								   const char *field, const char *fmt,...)
			pg_attribute_printf(4, 5);

/* V3 (chain_v3.c) */
extern bool v3_validate(const char *rec, uint32 reclen, MinidbChainError *err);
extern int	v3_decode_all(const char *rec, uint32 reclen,
						  MinidbVersionData **versions, MinidbChainError *err);
extern bool v3_iter_init(MinidbChainIter *it, MinidbChainError *err);
extern bool v3_iter_next(MinidbChainIter *it, MinidbVersionRef *ref,
						 MinidbChainError *err, bool *damaged);
extern int	v3_find_visible(char *rec, uint32 reclen, MinidbVisibleFn visible,
							void *arg, MinidbVersionRef *ref,
							MinidbChainError *err);
extern int	v3_find_visible_ordered(char *rec, uint32 reclen,
									MinidbVisibleFn visible,
									MinidbVisibleFn settled, void *arg,
									MinidbVersionRef *ref,
									MinidbChainError *err);
extern uint32 v3_build(char *out, uint32 outsize, const MinidbVersionData *v,
					   const MinidbRecordEnd *extra);
extern uint32 v3_prepend(char *out, uint32 outsize, const char *rec,
						 uint32 reclen, const MinidbVersionData *v,
						 const MinidbRecordEnd *extra, bool sizeonly);
extern uint32 v3_prepend_newest(char *out, uint32 outsize, const char *rec,
								uint32 reclen, int nnewest,
								const MinidbVersionData *v,
								const MinidbRecordEnd *extra, bool sizeonly);
extern int	v3_kept_newest(const char *rec, uint32 reclen, const bool *keep);
extern uint32 v3_from_versions(char *out, uint32 outsize,
							   const MinidbVersionData *vs, int n,
							   const MinidbRecordEnd *extra, bool sizeonly);
extern uint32 v3_prune(char *rec, uint32 reclen, const bool *keep,
					   bool sizeonly);
extern uint32 v3_set_lockers(char *out, uint32 outsize, const char *rec,
							 uint32 reclen, const MinidbLockers *lk,
							 bool sizeonly);
extern void v3_get_lockers(const char *rec, MinidbLockers *lk);
extern bool v3_get_single_ender(const char *rec, TransactionId *xid,
								bool *keys_updated);
extern bool v3_get_successor(const char *rec, ItemPointer succ,
							 bool *moved_part);
extern uint32 v3_spec_token(const char *rec);
extern int	v3_nversions(const char *rec, uint32 reclen);
extern uint32 v3_reserve(const char *rec, uint32 reclen);
extern void v3_set_end_hint(char *rec, uint16 hint);
extern void v3_set_end_xid(char *rec, uint32 reclen, TransactionId xid);
extern void v3_clear_spec(char *rec, uint32 reclen);
extern void v3_patch_successor(char *rec, uint32 reclen,
							   const ItemPointerData *succ);
extern uint32 v3_forget_successor(char *rec, uint32 reclen);
extern void v3_rebuild(const char *rec, const MinidbVersionRef *ref,
					   MinidbVersionData *out, MinidbDeltaBuf *buf);

#endif							/* MINIDB_CHAIN_INT_H */
