/*-------------------------------------------------------------------------
 *
 * chain.h
 *	  The minidb record: one row, all of its versions, newest first.
 *
 * This header and chain.c know the byte layout of a record and nothing
 * else: no buffers, no relations, no snapshots, no WAL.  They compile both
 * inside the server (postgres.h) and outside it (postgres_fe.h plus a small
 * shim, see test/unit/chain_shim.h) so that unit tests and a fuzzer can
 * drive them directly.
 *
 * Two record formats, told apart by rh_format; a build reads both forever.
 * Offsets are from the start of the record, which the caller must MAXALIGN
 * (page items and palloc'd buffers are).
 *
 * Format V1 (MINIDB_FORMAT_V1): versions back to back.
 *
 *	+-----------------------+  0
 *	| MinidbRecordHeader	|  format, flags, nversions, length, locker,
 *	|						|  successor TID (20 bytes)
 *	+-----------------------+  MINIDB_RECORD_HDRSZ (MAXALIGNed)
 *	| version 0 (newest)	|  MinidbVersionHeader, null bitmap, padding to
 *	|						|  vh_hoff, then tuple data in heap's format
 *	+-----------------------+  MAXALIGN(end of version 0)
 *	| version 1				|
 *	|  ...					|
 *	| version n-1 (oldest)	|
 *	+-----------------------+  rh_len == end of version n-1, exactly
 *
 * Format V2 (MINIDB_FORMAT_V2): a version directory after the header.
 *
 *	+-----------------------+  0
 *	| MinidbRecordHeader	|  as in V1 (20 bytes)
 *	+-----------------------+  MINIDB_V2_DIR_OFFSET (20)
 *	| uint16 dir[n]			|  dir[i] = offset of version i's header
 *	| zero padding			|
 *	+-----------------------+  MINIDB_V2_DATA_START(n) = MAXALIGN(20 + 2n)
 *	| version 0 .. n-1		|  each as in V1, at a MAXALIGNed offset
 *	+-----------------------+  rh_len == end of version n-1, exactly
 *
 *	The directory invariant (checked in full by validate, the reference
 *	walker and the iterator):
 *	  dir[0] == MINIDB_V2_DATA_START(n);
 *	  dir[i+1] == MAXALIGN(dir[i] + version i's vh_len)	 for i < n-1;
 *	  dir[n-1] + version n-1's vh_len == rh_len;
 *	  rh_len <= MINIDB_V2_MAX_LEN (offsets are uint16).
 *	So the versions tile the record exactly as in V1, in the same order,
 *	and the directory says where each one starts.  A one- or two-version
 *	V2 record has the same length as in V1 (the directory fits in the
 *	header's alignment padding); the directory grows by MAXIMUM_ALIGNOF
 *	every 4 versions (at n = 3, 7, 11, ...).
 *
 * Every version starts at a MAXALIGNed offset and its tuple data starts at
 * a MAXALIGNed offset (vh_hoff), so heap's alignment rules for attributes
 * hold for data read in place.
 *
 * What a read checks (the corruption guarantee, and its V2 trade-off):
 *
 *	V1: the fast walker walks every version header to the end of the record
 *	  on every read and checks that they tile it exactly (the tail check).
 *	  Any damage to any header field of any version, or to the tail, fails
 *	  every read of the record.  The cost is one header check per version
 *	  per read, whichever version the reader wants.
 *
 *	V2: the fast walker checks, in O(1): the record header; dir[0]; the LAST
 *	  version (its directory entry is MAXALIGNed, after the space the other
 *	  versions need, its header passes every check, and it ends exactly at
 *	  rh_len).  Then it checks each version it hands to the predicate, in
 *	  full, before handing it over: every header field, and the link
 *	  dir[i+1] == MAXALIGN(dir[i] + vh_len) (or, for the last, the end at
 *	  rh_len).  So:
 *	  - a truncated record, trailing bytes or a garbled last version fail
 *		the first read that touches the record, as in V1;
 *	  - damage in a version fails every read that visits that version
 *		(the newest reader visits version 0, the oldest visits them all);
 *	  - damage in a middle version that a read does not visit, or in its
 *		directory entry, is NOT seen by that read: it is found by
 *		minidb_record_validate, the reference walker, the iterator (prune,
 *		VACUUM, minidb_chain()), or the first read that visits it.
 *	  That is the price of O(1) reads of the newest version: V1 refuses a
 *	  damaged record on every read; V2 refuses it on every read that could
 *	  return or pass over a damaged byte, and never reads outside the
 *	  record either way.
 *
 * Builders make records of the format in minidb_record_format (the GUC
 * minidb.record_format; default V1) or of the format they are given
 * (minidb_record_build_as).  Prepend and prune keep a record's own format:
 * a V1 record stays V1 however often it is updated in place, so a table
 * holds both formats as long as old rows live; a row written after the
 * setting changed (INSERT, or an UPDATE that moves the row) takes the new
 * one.  CLUSTER / VACUUM FULL copy records as they are.
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef MINIDB_CHAIN_H
#define MINIDB_CHAIN_H

#include "storage/itemptr.h"

/* Record format versions.  Readers refuse formats they do not know. */
#define MINIDB_FORMAT_V1		1
#define MINIDB_FORMAT_V2		2	/* with a version directory */
#define MINIDB_FORMAT_MAX		MINIDB_FORMAT_V2	/* newest format we read */
/* The default of minidb_record_format (what builders make) */
#define MINIDB_FORMAT_CURRENT	MINIDB_FORMAT_V2

/* Format of the records builders make: the GUC minidb.record_format */
extern PGDLLIMPORT int minidb_record_format;

/* Record header flags (rh_flags) */
#define MINIDB_REC_LOCK_MULTI	0x01	/* rh_locker is a MultiXactId */
#define MINIDB_REC_MOVED_PART	0x02	/* head moved to another partition */
#define MINIDB_REC_FLAGS_MASK	0x03

/* Row-lock modes held by rh_locker (rh_lockmode); 0 means unlocked */
#define MINIDB_LOCK_NONE		0
#define MINIDB_LOCK_KEYSHARE	1
#define MINIDB_LOCK_SHARE		2
#define MINIDB_LOCK_NOKEYEXCL	3
#define MINIDB_LOCK_EXCLUSIVE	4
#define MINIDB_LOCK_MAX			MINIDB_LOCK_EXCLUSIVE

typedef struct MinidbRecordHeader
{
	uint8		rh_format;		/* MINIDB_FORMAT_* */
	uint8		rh_flags;		/* MINIDB_REC_* */
	uint16		rh_nversions;	/* number of versions, >= 1 */
	uint32		rh_len;			/* record length in bytes, header included */
	TransactionId rh_locker;	/* row locker (xid or multi), or invalid */
	uint16		rh_lockmode;	/* MINIDB_LOCK_* held by rh_locker */
	ItemPointerData rh_successor;	/* where a moved row went, else invalid */
} MinidbRecordHeader;

#define MINIDB_RECORD_HDRSZ		MAXALIGN(sizeof(MinidbRecordHeader))

/* V2: the version directory (see the layout above) */
#define MINIDB_V2_DIR_OFFSET	20	/* == sizeof(MinidbRecordHeader) */
#define MINIDB_V2_DATA_START(n) \
	MAXALIGN(MINIDB_V2_DIR_OFFSET + sizeof(uint16) * (uint32) (n))
#define MINIDB_V2_MAX_LEN		0xFFFF	/* directory offsets are uint16 */

/* Version flags (vh_flags) */
#define MINIDB_V_XMIN_COMMITTED 0x0001	/* hint: vh_xmin committed */
#define MINIDB_V_XMIN_ABORTED	0x0002	/* hint: vh_xmin aborted */
#define MINIDB_V_FROZEN			0x0004	/* visible to everyone */
#define MINIDB_V_TOMBSTONE		0x0008	/* DELETE: no row from here on */
#define MINIDB_V_MOVED			0x0010	/* UPDATE moved the row elsewhere */
#define MINIDB_V_HASNULL		0x0020	/* null bitmap present */
#define MINIDB_V_HASVARWIDTH	0x0040	/* heap's HEAP_HASVARWIDTH */
#define MINIDB_V_HASEXTERNAL	0x0080	/* heap's HEAP_HASEXTERNAL */
#define MINIDB_V_ENC_MASK		0x0300	/* encoding of the data */
#define MINIDB_V_ENC_FULL		0x0000	/* full tuple data, heap's format */
#define MINIDB_V_KEYS_UPDATED	0x0400	/* moved marker: the UPDATE changed a key
										 * column (heap's HEAP_KEYS_UPDATED) */
#define MINIDB_V_HINT_MASK		(MINIDB_V_XMIN_COMMITTED | \
								 MINIDB_V_XMIN_ABORTED | MINIDB_V_FROZEN)
#define MINIDB_V_NODATA_MASK	(MINIDB_V_TOMBSTONE | MINIDB_V_MOVED)
#define MINIDB_V_FLAGS_MASK		0x07FF

typedef struct MinidbVersionHeader
{
	TransactionId vh_xmin;		/* creating transaction */
	CommandId	vh_cid;			/* creating command */
	uint16		vh_flags;		/* MINIDB_V_* */
	uint16		vh_natts;		/* attributes in the data (0 for markers) */
	uint16		vh_len;			/* header + bitmap + padding + data */
	uint8		vh_hoff;		/* offset of the data, MAXALIGNed */
	uint8		vh_reserved;	/* zero */
} MinidbVersionHeader;

#define MINIDB_VERSION_HDRSZ	sizeof(MinidbVersionHeader)

/* Largest version we accept: it must fit a uint16 length. */
#define MINIDB_MAX_VERSION_LEN	0xFFFF
/* Largest chain a record may hold (keeps arrays of bools bounded). */
#define MINIDB_MAX_VERSIONS		0x7FFF
/*
 * The most a record grows when a marker (tombstone, moved) is prepended:
 * the marker's header, plus one MAXALIGN step of a V2 directory.
 */
#define MINIDB_MARKER_GROWTH_MAX	(MINIDB_VERSION_HDRSZ + MAXIMUM_ALIGNOF)
/* Largest vh_natts we accept: heap's MaxTupleAttributeNumber. */
#define MINIDB_MAX_NATTS		1664
/* Bytes of null bitmap for natts attributes: heap's BITMAPLEN. */
#define MINIDB_BITMAPLEN(natts) (((int) (natts) + 7) / 8)

/*
 * One version in a form that builders accept and the reference walker
 * returns.  bitmap is NULL unless MINIDB_V_HASNULL is set, in which case it
 * holds BITMAPLEN(natts) bytes.  data/datalen is the tuple data proper,
 * exactly the bytes heap keeps after t_hoff.
 */
typedef struct MinidbVersionData
{
	TransactionId xmin;
	CommandId	cid;
	uint16		flags;
	uint16		natts;
	const bits8 *bitmap;
	const char *data;
	uint32		datalen;
} MinidbVersionData;

/*
 * Where a version lives inside a record, as the fast walker reports it.
 */
typedef struct MinidbVersionRef
{
	int			index;			/* 0 = newest */
	uint32		offset;			/* start of the version header */
	MinidbVersionHeader *vh;	/* rec + offset */
} MinidbVersionRef;

/*
 * What the validators and walkers say about a damaged record.  version is
 * -1 for the record header.  Callers turn this into an ereport naming the
 * relation and TID (ERRCODE_DATA_CORRUPTED).
 */
typedef struct MinidbChainError
{
	int			version;
	const char *field;
	char		detail[160];
} MinidbChainError;

/*
 * Visibility is decided by the caller.  Called for versions newest first
 * until it returns true; it may set hint bits in *vh (the record is in a
 * buffer the caller holds locked).
 */
typedef bool (*MinidbVisibleFn) (MinidbVersionHeader *vh, int index,
								 void *arg);

/* Sizes */
extern uint32 minidb_version_size(const MinidbVersionData *v);

/* Builders.  out must be MAXALIGNed and have room for the result. */
extern uint32 minidb_record_build(char *out, uint32 outsize,
								  const MinidbVersionData *v);
extern uint32 minidb_record_prepend(char *out, uint32 outsize,
									const char *rec, uint32 reclen,
									const MinidbVersionData *v);
/* Format: minidb_record_format */
extern uint32 minidb_record_build_as(char *out, uint32 outsize,
									 const MinidbVersionData *v, int format);
/*
 * Exact length of rec once v is prepended (prepend keeps rec's format).
 * minidb_record_prepend_size, which cannot see rec, returns an upper bound
 * valid for every format (V1's exact length plus MAXIMUM_ALIGNOF, for a V2
 * directory that may grow); before V2 it was exact for V1.  Callers that
 * size a page change use the exact one.
 */
extern uint32 minidb_record_prepend_size_rec(const char *rec, uint32 reclen,
											 const MinidbVersionData *v);
extern uint32 minidb_record_prepend_size(uint32 reclen,
										 const MinidbVersionData *v);
/* Exact length of a record of the given format holding vs[0..n-1] */
extern uint64 minidb_record_size(const MinidbVersionData *vs, int n,
								 int format);
extern uint32 minidb_record_prune(char *rec, uint32 reclen,
								  const bool *keep);

/* Validation: every header field and the tail */
extern bool minidb_record_validate(const char *rec, uint32 reclen,
								   MinidbChainError *err);

/* The reference walker: decode everything, eagerly, into a palloc'd array */
extern int	minidb_chain_decode_all(const char *rec, uint32 reclen,
									MinidbVersionData **versions,
									MinidbChainError *err);
extern int	minidb_chain_pick_visible(MinidbVersionData *versions, int n,
									  MinidbVisibleFn visible, void *arg);
/* Free what minidb_chain_decode_all allocated (for callers without contexts) */
extern void minidb_chain_free_all(MinidbVersionData *versions, int n);

/*
 * The fast walker: header fields only.  V1: version by version, always to
 * the end of the record (the tail check).  V2: the record header, dir[0]
 * and the last version (the tail check, O(1)), then each version the
 * predicate is asked about, fully checked.  Returns the index of the first
 * version the predicate accepts, -1 when none does, and -2 when the record
 * is damaged (err filled in).
 */
extern int	minidb_chain_find_visible(char *rec, uint32 reclen,
									  MinidbVisibleFn visible, void *arg,
									  MinidbVersionRef *ref,
									  MinidbChainError *err);

/*
 * Read one version found by the fast walker, pointing into rec (no copy).
 * Inline: it sits on every read's path.
 */
static inline void
minidb_version_get(const char *rec, const MinidbVersionRef *ref,
				   MinidbVersionData *out)
{
	const MinidbVersionHeader *vh =
		(const MinidbVersionHeader *) (rec + ref->offset);

	out->xmin = vh->vh_xmin;
	out->cid = vh->vh_cid;
	out->flags = vh->vh_flags;
	out->natts = vh->vh_natts;
	out->bitmap = (vh->vh_flags & MINIDB_V_HASNULL) ?
		(const bits8 *) (rec + ref->offset + MINIDB_VERSION_HDRSZ) : NULL;
	out->data = rec + ref->offset + vh->vh_hoff;
	out->datalen = vh->vh_len - vh->vh_hoff;
}

/*
 * Iterate versions, for callers that look at every version (pruning,
 * VACUUM, minidb_chain()).  Every version is checked before it is yielded,
 * in the order validate checks them, and so is the tail: a caller that
 * iterates to the end has validated the record (both formats).  V1
 * reports tail damage after yielding the last version, V2 before.
 */
typedef struct MinidbChainIter
{
	char	   *rec;
	uint32		reclen;
	uint32		offset;			/* V1: end of the previous version (the next
								 * begins at MAXALIGN(offset)); V2: start of
								 * the next version (dir[index], checked) */
	int			index;			/* next version's index */
	int			nversions;
	int			format;			/* rh_format */
} MinidbChainIter;

extern bool minidb_chain_iter_init(MinidbChainIter *it, char *rec,
								   uint32 reclen, MinidbChainError *err);
/* true with *ref filled; false at the end (tail checked) or on damage */
extern bool minidb_chain_iter_next(MinidbChainIter *it, MinidbVersionRef *ref,
								   MinidbChainError *err, bool *damaged);

#ifndef MINIDB_STANDALONE
#include "pg_compat.h"			/* pg_noreturn */

/*
 * Server side only (minidb_chain_funcs.c): turn a MinidbChainError into
 * ereport(ERROR, ERRCODE_DATA_CORRUPTED).  where names the record, e.g.
 * "relation \"t\", TID (0,1)", or is NULL.
 */
pg_noreturn extern void minidb_chain_error_report(const MinidbChainError *err,
												  const char *where);
#endif

static inline MinidbRecordHeader *
minidb_record_header(const char *rec)
{
	return (MinidbRecordHeader *) rec;
}

/* V2: the version directory */
static inline uint16 *
minidb_record_dir(const char *rec)
{
	return (uint16 *) (rec + MINIDB_V2_DIR_OFFSET);
}

/*
 * Offset of version 0 (the head) of a record already checked (validated,
 * or iterated to the end).
 */
static inline uint32
minidb_record_head_offset(const char *rec)
{
	if (minidb_record_header(rec)->rh_format == MINIDB_FORMAT_V2)
		return minidb_record_dir(rec)[0];
	return MINIDB_RECORD_HDRSZ;
}

#endif							/* MINIDB_CHAIN_H */
