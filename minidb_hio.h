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

#include "minidb_page.h"

extern Buffer minidb_buffer_for_insert(Relation rel, uint32 len,
									   BulkInsertState bistate,
									   Buffer otherBuffer, bool *is_new);

#endif							/* MINIDB_HIO_H */
