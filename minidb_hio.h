/*-------------------------------------------------------------------------
 *
 * minidb_hio.h
 *	  Finding room for a new record (heap's hio.c).
 *
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef MINIDB_HIO_H
#define MINIDB_HIO_H

#include "access/heapam.h"
#include "access/xlogdefs.h"

#include "minidb_page.h"

/*
 * A writer's change that keeps its page's remembered reserve: the room
 * check sets it, minidb_reserve_change_end follows the logged change
 */
typedef struct MinidbReserveChange
{
	XLogRecPtr	lsn;			/* the page's before; invalid: none kept */
	Size		reserve;		/* without the changed record's part */
} MinidbReserveChange;

extern bool minidb_buffer_room_for_replace(Relation rel, Buffer buffer,
										   OffsetNumber off, uint32 newlen,
										   Size newreserve,
										   MinidbReserveChange *rc);
extern void minidb_reserve_change_begin(Relation rel, Buffer buffer,
										OffsetNumber off,
										MinidbReserveChange *rc);
extern void minidb_reserve_change_end(const MinidbReserveChange *rc,
									  Relation rel, Buffer buffer,
									  OffsetNumber off);

extern Buffer minidb_buffer_for_insert(Relation rel, const char *rec,
									   uint32 len, BulkInsertState bistate,
									   Buffer otherBuffer, bool *is_new,
									   MinidbReserveChange *rc);

#endif							/* MINIDB_HIO_H */
