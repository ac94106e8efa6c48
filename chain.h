/*-------------------------------------------------------------------------
 *
 * chain.h
 *	  The minidb record: one row, all of its versions, newest first.
 *
 * This header, chain.c and chain_v3.c know the byte layout of a record and
 * nothing else: no buffers, no relations, no snapshots, no WAL.  They
 * compile both inside the server (postgres.h) and outside it (postgres_fe.h
 * plus a small shim, see test/unit/chain_shim.h) so that unit tests and a
 * fuzzer can drive them directly.
 *
 * Three record formats, told apart by the first byte; a build reads all of
 * them forever.  Offsets are from the start of the record, which the caller
 * must MAXALIGN (page items and palloc'd buffers are).
 *
 * Format V3 (MINIDB_FORMAT_V3, the default; chain_v3.c): compact.
 *
 *	+-----------------------+  0
 *	| info, xinfo			|  2 bytes: format, which optional fields follow,
 *	|						|  the end of the row (xinfo, see below)
 *	| [xmax]				|  4 bytes, with MINIDB_R3_XMAX: the row's lockers
 *	|						|  (an xid or a MultiXactId), or the transaction
 *	|						|  that deleted or moved it (heap's xmax)
 *	| [successor]			|  6 bytes, with MINIDB_R3_SUCC: where a moved row
 *	|						|  went, or a speculative insertion's token
 *	+-----------------------+  rounded up to 4
 *	| version 0 (newest)	|  12-byte header, null bitmap, padding to
 *	|						|  MAXALIGN, then tuple data in heap's format
 *	+-----------------------+  rounded up to 4
 *	| version 1				|  the same, or a DELTA: header, bitmap, uint16
 *	|  ...					|  prefix and suffix lengths, then the bytes of
 *	| version n-1 (oldest)	|  its data that differ from version i-1's
 *	+-----------------------+
 *	| [trailer]				|  with MINIDB_R3_MULTI (n >= 2), at an even
 *	|						|  offset: uint16 end[n] (where each version ends)
 *	|						|  then uint16 n; the record ends with it
 *	+-----------------------+
 *
 *	A one-version record takes 16 bytes before its data, a heap tuple 24:
 *	the header of a version holds only xmin, cid, flags and natts, and what
 *	is usually empty (xmax, successor, version directory) is absent until a
 *	row needs it.  A DELETE, a row lock or a moving UPDATE adds the xmax
 *	(and successor) fields: 8 bytes of growth, whatever the record held, so
 *	a page keeps 8 bytes per record for them (MINIDB_SLOT_RESERVE).  The
 *	deleted or moved row's end is not a version of its own: readers see it
 *	as a "virtual" marker version 0 (MINIDB_V_VIRTUAL), synthesized from
 *	xmax, and the cid of the version it ends holds its cmax as heap's t_cid
 *	does (a combo command id when both are the current transaction's,
 *	MINIDB_V_COMBOCID; the server resolves it, see minidb_visibility.c).
 *	A superseded version is stored as its difference from the newer one
 *	(prefix and suffix shared with it, and the bytes between) when that
 *	takes at least 8 bytes fewer, alignment counted; the newest version
 *	is always whole, so a reader of the newest version reads it in place,
 *	and an older reader rebuilds its version (minidb_version_get with a
 *	buffer).
 *
 * Format V1 (MINIDB_FORMAT_V1): versions back to back.
 *
 *	+-----------------------+  0
 *	| MinidbRecordHeader	|  format, flags, nversions, length, locker,
 *	|						|  successor TID (20 bytes)
 *	+-----------------------+  MINIDB_RECORD_HDRSZ (MAXALIGNed)
 *	| version 0 (newest)	|  MinidbVersionHeaderV1, null bitmap, padding
 *	|						|  to vh_hoff, then tuple data in heap's format
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
 *
 * In V1 and V2 a DELETE or moving UPDATE prepends a marker version of its
 * own (MINIDB_V_TOMBSTONE, MINIDB_V_MOVED) and the row lockers live in the
 * record header.  Tuple data starts at a MAXALIGNed offset in every
 * format, so heap's alignment rules hold for data read in place.
 *
 * What a read checks (the corruption guarantee, and the V2/V3 trade-off):
 *
 *	V1: the fast walker walks every version header to the end of the record
 *	  on every read and checks that they tile it exactly (the tail check).
 *	  Any damage to any header field of any version, or to the tail, fails
 *	  every read of the record.
 *
 *	V2 and V3: the fast walker checks, in O(1), the record header and the
 *	  start of the directory, and the LAST version (its place, its header,
 *	  its end at the record's end).  Then it checks each version it hands
 *	  to the predicate, in full, before handing it over, with its link to
 *	  the next.  So:
 *	  - a truncated record, trailing bytes or a garbled last version fail
 *		the first read that touches the record, as in V1;
 *	  - damage in a version fails every read that visits that version
 *		(the newest reader visits version 0, the oldest visits them all);
 *	  - damage in a middle version that a read does not visit, or in its
 *		directory entry, is NOT seen by that read: it is found by
 *		minidb_record_validate, the reference walker, the iterator (prune,
 *		VACUUM, minidb_chain()), or the first read that visits it.
 *	  A V3 DELTA version is checked against its newer neighbour (its prefix
 *	  and suffix must fit that version's data), which a reader of it has
 *	  visited first.
 *	  An old snapshot's search (minidb_chain_find_visible_ordered) visits
 *	  only the versions it probes: damage in a version it skips is, like
 *	  damage below a hit, left to validate, the iterator and the reads
 *	  that visit it.
 *
 * Builders make records of the format in minidb_record_format (the GUC
 * minidb.record_format; default V3) or of the format they are given.
 * A write to a V1 or V2 record (prepend, a marker) turns it into V3 when
 * the caller asks for V3; prune, freeze and row locks keep a record's own
 * format.  CLUSTER and VACUUM FULL rewrite every record in the current
 * format.
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef MINIDB_CHAIN_H
#define MINIDB_CHAIN_H

#include "access/transam.h"
#include "storage/itemptr.h"

/* Record format versions.  Readers refuse formats they do not know. */
#define MINIDB_FORMAT_V1		1
#define MINIDB_FORMAT_V2		2	/* with a version directory */
#define MINIDB_FORMAT_V3		3	/* compact: optional fields, deltas */
#define MINIDB_FORMAT_MAX		MINIDB_FORMAT_V3	/* newest format we read */
/* The default of minidb_record_format (what builders make) */
#define MINIDB_FORMAT_CURRENT	MINIDB_FORMAT_V3

/* Format of the records builders make: the GUC minidb.record_format */
extern PGDLLIMPORT int minidb_record_format;

/* The format of a record, from its first byte (0: none we know) */
static inline int
minidb_record_format_of(const char *rec)
{
	uint8		b = (uint8) rec[0];

	if (b == MINIDB_FORMAT_V1 || b == MINIDB_FORMAT_V2)
		return b;
	if ((b & 0x07) == MINIDB_FORMAT_V3)
		return MINIDB_FORMAT_V3;
	return 0;
}

/* ----------------------------------------------------------------
 * V1 and V2 record header
 * ----------------------------------------------------------------
 */

/* Record header flags (rh_flags) */
#define MINIDB_REC_LOCK_MULTI	0x01	/* rh_locker is a MultiXactId */
#define MINIDB_REC_MOVED_PART	0x02	/* head moved to another partition */
#define MINIDB_REC_FLAGS_MASK	0x03

/* Row-lock modes (rh_lockmode, MinidbLockers.mode); 0 means unlocked */
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

/* ----------------------------------------------------------------
 * V3 record header: info (byte 0) and xinfo (byte 1)
 * ----------------------------------------------------------------
 */
#define MINIDB_R3_FORMAT_MASK	0x07	/* == MINIDB_FORMAT_V3 */
#define MINIDB_R3_XMAX			0x08	/* the xmax field is present */
#define MINIDB_R3_SUCC			0x10	/* the successor field is present */
#define MINIDB_R3_MULTI			0x20	/* n >= 2: the trailer is present */
#define MINIDB_R3_MODE_SHIFT	6		/* lock-only xid: its mode - 1 */
#define MINIDB_R3_INFO_PREFIX	2		/* info and xinfo */

#define MINIDB_R3X_XMAX_MULTI	0x01	/* xmax is a MultiXactId */
#define MINIDB_R3X_LOCK_ONLY	0x02	/* xmax only locks the row */
#define MINIDB_R3X_COMMITTED	0x04	/* hint: the ender committed */
#define MINIDB_R3X_INVALID		0x08	/* hint: the ender aborted */
#define MINIDB_R3X_MOVED		0x10	/* the row moved (else was deleted) */
#define MINIDB_R3X_KEYS_UPDATED 0x20	/* ... by an UPDATE of a key column */
#define MINIDB_R3X_MOVED_PART	0x40	/* ... to another partition */
#define MINIDB_R3X_SPEC			0x80	/* successor is a speculative token */

#define MINIDB_R3_MAX_LEN		0xFFFF	/* trailer offsets are uint16 */

/*
 * A speculative insertion's token is kept as heap keeps it in t_ctid: the
 * token as block number, this offset (heap's SpecTokenOffsetNumber;
 * minidb_modify.c checks that they agree).
 */
#define MINIDB_SPEC_TOKEN_OFFSET	0xfffe

/*
 * The most a V3 record grows for its xmax and successor fields, whatever
 * it held: the room a page keeps per record (minidb_page.c).
 */
#define MINIDB_SLOT_RESERVE		MAXIMUM_ALIGNOF

/* ----------------------------------------------------------------
 * Versions
 * ----------------------------------------------------------------
 */

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
#define MINIDB_V_ENC_DELTA		0x0100	/* V3: difference from version i-1 */
#define MINIDB_V_KEYS_UPDATED	0x0400	/* the UPDATE that wrote this version
										 * (data or moved marker) ended the one
										 * below as a key update: it changed a
										 * key column, or its transaction held
										 * the row FOR UPDATE (heap's
										 * HEAP_KEYS_UPDATED on the old tuple) */
#define MINIDB_V_COMBOCID		0x0800	/* V3: vh_cid is a combo command id */
#define MINIDB_V_HINT_MASK		(MINIDB_V_XMIN_COMMITTED | \
								 MINIDB_V_XMIN_ABORTED | MINIDB_V_FROZEN)
#define MINIDB_V_NODATA_MASK	(MINIDB_V_TOMBSTONE | MINIDB_V_MOVED)
#define MINIDB_V_FLAGS_MASK		0x07FF	/* V1, V2 on disk */
#define MINIDB_V3_FLAGS_MASK	(MINIDB_V_HINT_MASK | MINIDB_V_HASNULL | \
								 MINIDB_V_HASVARWIDTH | MINIDB_V_HASEXTERNAL | \
								 MINIDB_V_ENC_MASK | MINIDB_V_KEYS_UPDATED | \
								 MINIDB_V_COMBOCID)
/* Never on disk: in the headers readers see, and in builders' input */
#define MINIDB_V_VIRTUAL		0x1000	/* the marker a V3 row's end stands for */
#define MINIDB_V_XMIN_MULTI		0x2000	/* vh_xmin is a MultiXactId */

/*
 * A version's header as readers see it: a V3 version's header on disk, and
 * the first 12 bytes of a V1 or V2 version's (MinidbVersionHeaderV1).
 */
typedef struct MinidbVersionHeader
{
	TransactionId vh_xmin;		/* creating transaction */
	CommandId	vh_cid;			/* creating command (see MINIDB_V_COMBOCID) */
	uint16		vh_flags;		/* MINIDB_V_* */
	uint16		vh_natts;		/* attributes in the data (0 for markers) */
} MinidbVersionHeader;

#define MINIDB_VERSION_HDRSZ	sizeof(MinidbVersionHeader)

/* A V1 or V2 version's header on disk */
typedef struct MinidbVersionHeaderV1
{
	TransactionId vh_xmin;
	CommandId	vh_cid;
	uint16		vh_flags;
	uint16		vh_natts;
	uint16		vh_len;			/* header + bitmap + padding + data */
	uint8		vh_hoff;		/* offset of the data, MAXALIGNed */
	uint8		vh_reserved;	/* zero */
} MinidbVersionHeaderV1;

#define MINIDB_V1_VERSION_HDRSZ sizeof(MinidbVersionHeaderV1)

/* Largest version we accept: it must fit a uint16 length. */
#define MINIDB_MAX_VERSION_LEN	0xFFFF
/* Largest chain a record may hold (keeps arrays of bools bounded). */
#define MINIDB_MAX_VERSIONS		0x7FFF
/*
 * The most a V1 or V2 record grows when a marker (tombstone, moved) is
 * prepended: the marker's header, plus one MAXALIGN step of a directory.
 */
#define MINIDB_MARKER_GROWTH_MAX	(MINIDB_V1_VERSION_HDRSZ + MAXIMUM_ALIGNOF)
/* Largest vh_natts we accept: heap's MaxTupleAttributeNumber. */
#define MINIDB_MAX_NATTS		1664
/* Bytes of null bitmap for natts attributes: heap's BITMAPLEN. */
#define MINIDB_BITMAPLEN(natts) (((int) (natts) + 7) / 8)

/* Bytes of null bitmap a version with these flags and natts carries */
static inline uint32
minidb_version_bitmaplen(uint16 flags, uint16 natts)
{
	return (flags & MINIDB_V_HASNULL) ? MINIDB_BITMAPLEN(natts) : 0;
}

/*
 * Whether the padding after a V3 version's null bitmap (at bitmapoff, for
 * natts attributes) is zero up to padend, where the data or the DELTA
 * affix begins, as the builder writes it.  A V3 version keeps no data
 * offset: a HASNULL flag set by damage on a row without nulls takes the
 * data's first bytes for the bitmap and moves the data past them, which
 * can leave a row of fewer values whose attributes end exactly at the
 * data's end (two leading int4s read as nulls, say), a row the attribute
 * check cannot tell from a real one; those bytes are rarely zero.  (The
 * bitmap's own bits past the last attribute are not checked: the builder
 * writes the bitmap it is given.)  The caller has checked that padend lies
 * inside the version.
 */
static pg_attribute_always_inline bool
minidb_v3_bitmap_clean(const char *rec, uint32 bitmapoff, uint16 natts,
					   uint32 padend)
{
	uint32		from = bitmapoff + MINIDB_BITMAPLEN(natts);
	uint64		word;

	if (from >= padend)
		return true;

	/*
	 * The scans ask this of every row with a null: padding of fewer than 8
	 * bytes, which ends on the word that padend ends, read as one word
	 */
	if (padend - from < sizeof(uint64) && padend >= sizeof(uint64))
	{
		uint32		bits = 8 * (sizeof(uint64) - (padend - from));

		memcpy(&word, rec + padend - sizeof(uint64), sizeof(uint64));
#ifdef WORDS_BIGENDIAN
		return (word << bits) == 0;
#else
		return (word >> bits) == 0;
#endif
	}
	for (uint32 p = from; p < padend; p++)
		if (rec[p] != 0)
			return false;
	return true;
}

/*
 * One version in a form that builders accept and the reference walker
 * returns.  bitmap is NULL unless MINIDB_V_HASNULL is set, in which case it
 * holds BITMAPLEN(natts) bytes.  data/datalen is the tuple data proper,
 * exactly the bytes heap keeps after t_hoff (for a DELTA version too: the
 * data it stands for).  A marker (MINIDB_V_NODATA_MASK) given to a V3
 * builder becomes the record's end: xmin its xmax (a MultiXactId with
 * MINIDB_V_XMIN_MULTI), cid the cmax (a combo id with MINIDB_V_COMBOCID).
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
 * The marker a V3 record's end stands for, in a reader's hands: vh is what
 * readers see, rec lets a hint bit set on vh go back to the record
 * (minidb_virtual_set_hint).
 */
typedef struct MinidbVirtualMarker
{
	MinidbVersionHeader vh;
	char	   *rec;
	TransactionId raw_xmax;		/* the xmax field (a MultiXactId when
								 * MINIDB_V_XMIN_MULTI) */
} MinidbVirtualMarker;

/*
 * Where a version lives inside a record, as the walkers report it.  For
 * the virtual marker of a V3 record vh points into the ref itself: copy a
 * ref with minidb_ref_copy, never by assignment.
 */
typedef struct MinidbVersionRef
{
	int			index;			/* 0 = newest */
	uint32		offset;			/* start of the version header; 0 for a
								 * virtual marker */
	MinidbVersionHeader *vh;	/* rec + offset, or &virt.vh */
	uint32		end;			/* where the version ends */
	uint32		dataoff;		/* FULL: where its data starts; DELTA: where
								 * its prefix/suffix lengths are */
	uint32		datalen;		/* bytes of data it stands for */
	uint32		bitmapoff;		/* where its null bitmap starts */
	uint32		reclen;			/* the record's length */
	MinidbVirtualMarker virt;
} MinidbVersionRef;

static inline void
minidb_ref_copy(MinidbVersionRef *dst, const MinidbVersionRef *src)
{
	*dst = *src;
	if (src->vh == &src->virt.vh)
		dst->vh = &dst->virt.vh;
}

/* Bytes a version takes in its record (its share of a pruning's gain) */
static inline uint32
minidb_ref_size(const MinidbVersionRef *ref)
{
	return ref->end - ref->offset;
}

/*
 * How many leading bytes a and b share, at most max: eight at a time while
 * they match, then byte by byte (a row's unchanged columns, a padded
 * char(n), are often most of its bytes).  For the differences V3 stores
 * and the prefix/suffix compression of a PREPEND's WAL record.
 */
static inline uint32
minidb_common_prefix(const char *a, const char *b, uint32 max)
{
	uint32		n = 0;

	while (n + sizeof(uint64) <= max &&
		   memcmp(a + n, b + n, sizeof(uint64)) == 0)
		n += sizeof(uint64);
	while (n < max && a[n] == b[n])
		n++;
	return n;
}

/* The same for the bytes that end where a_end and b_end do */
static inline uint32
minidb_common_suffix(const char *a_end, const char *b_end, uint32 max)
{
	uint32		n = 0;

	while (n + sizeof(uint64) <= max &&
		   memcmp(a_end - n - sizeof(uint64), b_end - n - sizeof(uint64),
				  sizeof(uint64)) == 0)
		n += sizeof(uint64);
	while (n < max && *(a_end - 1 - n) == *(b_end - 1 - n))
		n++;
	return n;
}

/*
 * A scratch buffer for rebuilding DELTA versions: data NULL and size 0 to
 * start; minidb_version_get_buf grows it with palloc/repalloc in the
 * memory context current at the first call.
 */
typedef struct MinidbDeltaBuf
{
	char	   *data;
	uint32		size;
} MinidbDeltaBuf;

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
 * buffer the caller holds locked; a virtual marker's go back through
 * minidb_virtual_set_hint).
 */
typedef bool (*MinidbVisibleFn) (MinidbVersionHeader *vh, int index,
								 void *arg);

/*
 * The server resolves a MultiXactId's updating member for the virtual
 * marker of a V3 record whose xmax is one (minidb_visibility.c sets it;
 * rec, the record, or NULL, names the place of a damaged MultiXactId);
 * without it (standalone builds) the marker's vh_xmin is the MultiXactId.
 */
typedef TransactionId (*MinidbMultiUpdaterFn) (TransactionId multi,
											   const char *rec);
extern PGDLLIMPORT MinidbMultiUpdaterFn minidb_multi_updater_hook;

/* ----------------------------------------------------------------
 * Row lockers and the other record-level fields, in any format
 * ----------------------------------------------------------------
 */
typedef struct MinidbLockers
{
	TransactionId xid;			/* an xid or a MultiXactId; invalid: none */
	uint16		mode;			/* MINIDB_LOCK_*: a single locker's mode; for
								 * a multixact the strongest, as a hint */
	bool		multi;
	bool		with_updater;	/* V3: the multixact also holds the row's
								 * updater (the transaction that ended it) */
} MinidbLockers;

extern void minidb_record_get_lockers(const char *rec, MinidbLockers *lk);

/*
 * V3: the transaction that ended the row (deleted or moved it), when its
 * xmax is that one xid (not a MultiXactId, not a lock); *keys_updated says
 * whether it changed a key column.  False otherwise, and for V1 and V2.
 */
extern bool minidb_record_get_single_ender(const char *rec,
										   TransactionId *xid,
										   bool *keys_updated);
/* Where a moved row went; false when the row did not move (or moved to
 * another partition, *moved_part then true) */
extern bool minidb_record_get_successor(const char *rec, ItemPointer succ,
										bool *moved_part);
/* A speculative insertion's token, or 0 */
extern uint32 minidb_record_spec_token(const char *rec);
/* Versions as walkers count them (a V3 record's end counts as one) */
extern int	minidb_record_nversions(const char *rec, uint32 reclen);

/*
 * The most rec may still grow for what ends or locks its row: for a V3
 * record, what its xmax and successor fields would add (0 once both are
 * there; at most MINIDB_SLOT_RESERVE); for V1 and V2 a marker version.
 */
extern uint32 minidb_record_reserve(const char *rec, uint32 reclen);

/*
 * minidb_record_reserve with its common case inline, for the writers that
 * sum a page's reserve: a V3 record with neither field grows by
 * MINIDB_SLOT_RESERVE (v3_reserve: the versions start at 4 and would start
 * at 12, one MAXALIGN step), except one shrunk to its 2-byte header, which
 * never grows.  test_chain_v3 checks it against minidb_record_reserve on
 * every record shape it builds.
 */
static inline uint32
minidb_record_reserve_quick(const char *rec, uint32 reclen)
{
	if (likely(reclen >= MINIDB_R3_INFO_PREFIX &&
			   ((uint8) rec[0] & (MINIDB_R3_FORMAT_MASK | MINIDB_R3_XMAX |
								  MINIDB_R3_SUCC)) == MINIDB_FORMAT_V3))
		return reclen == MINIDB_R3_INFO_PREFIX ? 0 : MINIDB_SLOT_RESERVE;
	return minidb_record_reserve(rec, reclen);
}

/* Does a V3 record's header end its row (walkers show a virtual marker 0)? */
static inline bool
minidb_record_has_end(const char *rec)
{
	return minidb_record_format_of(rec) == MINIDB_FORMAT_V3 &&
		((uint8) rec[0] & MINIDB_R3_XMAX) &&
		!((uint8) rec[1] & MINIDB_R3X_LOCK_ONLY);
}
/* A hint set on a virtual marker's header, written to its record */
extern void minidb_virtual_set_hint(MinidbVersionHeader *vh, uint16 hint);

/* Record-level changes beyond prepend and prune (see chain.c) */
typedef struct MinidbRecordEnd
{
	const ItemPointerData *successor;	/* a moved row's new TID, a token */
	bool		spec;			/* successor is a speculative token */
	bool		moved_part;		/* the row moved to another partition */
	const MinidbLockers *lockers;	/* lockers to set, or NULL */
	bool		drop_lockers;	/* a data version prepended: the row's
								 * lock-only xmax goes (its writer found
								 * every locker ended), as heap's new tuple
								 * gets no xmax then */
} MinidbRecordEnd;

/* Sizes */
extern uint32 minidb_version_size(const MinidbVersionData *v);

/* Builders.  out must be MAXALIGNed and have room for the result. */
extern uint32 minidb_record_build(char *out, uint32 outsize,
								  const MinidbVersionData *v);
extern uint32 minidb_record_build_as(char *out, uint32 outsize,
									 const MinidbVersionData *v, int format);
/* ... with lockers or a speculative token (V3; V1/V2 in the header) */
extern uint32 minidb_record_build_ex(char *out, uint32 outsize,
									 const MinidbVersionData *v, int format,
									 const MinidbRecordEnd *extra);
/*
 * Prepend v as the newest version of rec, in format (0: rec's own).  A
 * marker v becomes a V3 record's end; extra gives its successor.
 */
extern uint32 minidb_record_prepend(char *out, uint32 outsize,
									const char *rec, uint32 reclen,
									const MinidbVersionData *v);
extern uint32 minidb_record_prepend_ex(char *out, uint32 outsize,
									   const char *rec, uint32 reclen,
									   const MinidbVersionData *v,
									   int format,
									   const MinidbRecordEnd *extra);
/*
 * The same, in rec's own format, onto rec pruned to keep[] without pruning
 * it first, when keep[] keeps rec's nnewest newest versions and drops the
 * older ones: minidb_record_kept_newest gives nnewest, or 0 when that is
 * not so (V1, V2, a row's end, any other pattern).
 */
extern int	minidb_record_kept_newest(const char *rec, uint32 reclen,
									  const bool *keep);
extern uint32 minidb_record_prepend_newest(char *out, uint32 outsize,
										   const char *rec, uint32 reclen,
										   int nnewest,
										   const MinidbVersionData *v,
										   const MinidbRecordEnd *extra);
/* Rewrites: a record of format from whole versions, fields from like */
extern uint32 minidb_record_from_versions(char *out, uint32 outsize,
										  const MinidbVersionData *vs, int n,
										  int format, const char *like);
extern uint32 minidb_record_rewrite_as(char *out, uint32 outsize,
									   const char *rec, uint32 reclen,
									   int format);
/* The format a write to rec should produce: V3 unless the GUC says older */
extern int	minidb_record_write_format(const char *rec);
/*
 * Exact length of rec once v is prepended in format (0: rec's own).
 * minidb_record_prepend_size, which cannot see rec, returns an upper bound
 * valid for every format.  When the write will drop rec's end (a V3
 * record's, or a V1/V2 head marker turned into V3: the writer prunes an
 * aborted end first), the length is the record's without it.
 */
extern uint32 minidb_record_prepend_size_ex(const char *rec, uint32 reclen,
											const MinidbVersionData *v,
											int format,
											const MinidbRecordEnd *extra);
extern uint32 minidb_record_prepend_size_rec(const char *rec, uint32 reclen,
											 const MinidbVersionData *v);
extern uint32 minidb_record_prepend_size(uint32 reclen,
										 const MinidbVersionData *v);
/* Exact length of a record of the given format holding vs[0..n-1] */
extern uint64 minidb_record_size(const MinidbVersionData *vs, int n,
								 int format);
/*
 * Remove every version i with keep[i] false (in place, the record never
 * grows); 0 when none is kept.  Removing a V3 record's virtual marker
 * removes its end (keeping a multixact's lockers).
 */
extern uint32 minidb_record_prune(char *rec, uint32 reclen, const bool *keep);
/* Would minidb_record_prune keep rec within reclen bytes?  (see chain.c) */
extern bool minidb_record_prune_fits(const char *rec, uint32 reclen,
									 const bool *keep);
/*
 * Set (lk->xid valid) or clear the row lockers of rec into out (which may
 * be rec when the length does not change); returns the new length.  A V3
 * record's aborted end goes with it.  The _size variant computes it.
 */
extern uint32 minidb_record_set_lockers(char *out, uint32 outsize,
										const char *rec, uint32 reclen,
										const MinidbLockers *lk);
extern uint32 minidb_record_set_lockers_size(const char *rec, uint32 reclen,
											 const MinidbLockers *lk);
/* A V3 end's xmax replaced by xid (a multixact's updater; VACUUM) */
extern void minidb_record_set_end_xid(char *rec, uint32 reclen,
									  TransactionId xid);
/* Drop a speculative token, in place (V3 keeps an empty successor field) */
extern void minidb_record_clear_spec(char *rec, uint32 reclen);
/* Set the successor of a record that has one (same length), in place */
extern void minidb_record_patch_successor(char *rec, uint32 reclen,
										  const ItemPointerData *succ);
/*
 * A moved row's end becomes a deletion: the successor (and a V3 record's
 * successor field) goes; the lockers too.  In place, returns the length.
 */
extern uint32 minidb_record_forget_successor(char *rec, uint32 reclen);

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
/* Same header fields (all flag bits), null bitmap and data bytes? */
extern bool minidb_version_equal(const MinidbVersionData *a,
								 const MinidbVersionData *b);

/*
 * The fast walker: header fields only.  V1: version by version, always to
 * the end of the record (the tail check).  V2, V3: the record header, the
 * directory's start and the last version (the tail check, O(1)), then each
 * version the predicate is asked about, fully checked.  Returns the index
 * of the first version the predicate accepts, -1 when none does, and -2
 * when the record is damaged (err filled in).
 */
extern int	minidb_chain_find_visible(char *rec, uint32 reclen,
									  MinidbVisibleFn visible, void *arg,
									  MinidbVersionRef *ref,
									  MinidbChainError *err);

/*
 * The fast walker for a predicate that follows the record's commit order,
 * allowed to skip versions instead of asking about each (the old reader
 * of a deep chain).  Versions are prepended in commit order (a writer
 * waits until the head's xmin, if another transaction's, has ended), so
 * among the versions whose hint says committed or frozen ("settled"), an
 * MVCC snapshot sees a suffix: if it does not see a settled version, it
 * sees no newer one either, provided the reading transaction wrote none
 * of them (then nothing newer can be its own, visible by command id).
 *
 * The caller promises, for every settled version v (MINIDB_VERSION_SETTLED
 * of its flags): settled(v) == visible(v), and if settled(v) is false then
 * visible is false for every version newer than v.  settled may set hint
 * bits and nothing else.  Then the result is the linear walk's.
 *
 * V2 and V3: the walker asks visible about version 0 (a V3 row's end and
 * data version 0) as minidb_chain_find_visible does.  When more than
 * MINIDB_SEARCH_MIN versions are left it searches them (MINIDB_NEXT_PROBE),
 * asking settled about settled probes, each checked in full first (V3:
 * a probe right above a version found visible is asked of visible
 * instead, which gives the same answer and, when it is no, is the
 * question about the version above the hit); a
 * probe that is not settled, or whose directory entry or header is not
 * plainly sound, ends the search and the walk continues, version by
 * version, from the newest version not yet ruled out.  A search that
 * converges returns the probe settled accepted.  The walker asks visible
 * about the version just above the one it returns (or the last one, when
 * it returns -1), so that a predicate that remembers the last version
 * passed over (the visible version's xmax) ends as after a linear walk.  The tail check is
 * kept; a hit stored as a V3 difference has every version above it
 * checked (it is rebuilt from them).  What a read does not visit it does
 * not check: damage in a skipped version is left to validate, the
 * iterator and the reads that visit it, as for the versions below the
 * hit (see "What a read checks" above).  V1 records, and settled == NULL,
 * take minidb_chain_find_visible.
 */
#define MINIDB_SEARCH_MIN		3	/* versions past 0 below which to walk */
/*
 * The search's next probe in [lo, hi) of a record of n versions: galloping
 * up from the oldest version (n-1, n-2, n-4, ... while they are visible;
 * d > 0), since old snapshots are the readers that skip, then bisecting
 * once a probe was not visible (d == 0).  The oldest reader of a hinted
 * chain asks two questions (n-1 seen, n-2 not) and the one above the hit.
 */
#define MINIDB_NEXT_PROBE(lo, hi, n, d) \
	((d) > 0 && (n) - (d) >= (lo) ? (n) - (d) : (lo) + ((hi) - (lo)) / 2)
#define MINIDB_VERSION_SETTLED(flags) \
	(((flags) & (MINIDB_V_XMIN_COMMITTED | MINIDB_V_FROZEN)) != 0 && \
	 ((flags) & MINIDB_V_XMIN_ABORTED) == 0)

extern int	minidb_chain_find_visible_ordered(char *rec, uint32 reclen,
											  MinidbVisibleFn visible,
											  MinidbVisibleFn settled,
											  void *arg,
											  MinidbVersionRef *ref,
											  MinidbChainError *err);

/*
 * Read one version found by a walker (the record unchanged since).  A FULL
 * version points into rec (no copy); a DELTA version is rebuilt into buf
 * (NULL: a fresh palloc'd buffer).
 */
extern void minidb_version_rebuild(const char *rec,
								   const MinidbVersionRef *ref,
								   MinidbVersionData *out,
								   MinidbDeltaBuf *buf);

static inline void
minidb_version_get_buf(const char *rec, const MinidbVersionRef *ref,
					   MinidbVersionData *out, MinidbDeltaBuf *buf)
{
	const MinidbVersionHeader *vh = ref->vh;

	out->xmin = vh->vh_xmin;
	out->cid = vh->vh_cid;
	out->flags = vh->vh_flags;
	out->natts = vh->vh_natts;
	out->bitmap = (vh->vh_flags & MINIDB_V_HASNULL) ?
		(const bits8 *) (rec + ref->bitmapoff) : NULL;
	if (likely((vh->vh_flags & MINIDB_V_ENC_MASK) == MINIDB_V_ENC_FULL))
	{
		out->data = rec + ref->dataoff;
		out->datalen = ref->datalen;
		return;
	}
	minidb_version_rebuild(rec, ref, out, buf);
}

static inline void
minidb_version_get(const char *rec, const MinidbVersionRef *ref,
				   MinidbVersionData *out)
{
	minidb_version_get_buf(rec, ref, out, NULL);
}

/*
 * Iterate versions, for callers that look at every version (pruning,
 * VACUUM, minidb_chain()).  Every version is checked before it is yielded,
 * in the order validate checks them, and so is the tail: a caller that
 * iterates to the end has validated the record (every format).  V1
 * reports tail damage after yielding the last version, V2 and V3 before.
 */
typedef struct MinidbChainIter
{
	char	   *rec;
	uint32		reclen;
	uint32		offset;			/* V1: end of the previous version (the next
								 * begins at MAXALIGN(offset)); V2: start of
								 * the next version (dir[index], checked);
								 * V3: end of the previous version */
	int			index;			/* next version's index */
	int			nversions;		/* as minidb_record_nversions counts */
	int			format;
	/* V3 */
	uint32		prevlen;		/* data length of the previous version */
	uint32		start0;			/* where version 0 begins */
	uint32		trailer;		/* where the trailer begins (reclen if none) */
	int			ndata;			/* data versions */
	bool		has_end;		/* index 0 is the virtual marker */
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
/*
 * Server side only (minidb_visibility.c): damage found in rec by code that
 * was handed only its bytes.  When rec lies on a buffer's page, raise
 * ERRCODE_DATA_CORRUPTED naming the relation and TID; else return.
 */
extern void minidb_record_damaged(const char *rec, const MinidbChainError *err);
#endif

/* V1, V2: the record header */
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
 * The newest reader's shortcut for the commonest record: one data version,
 * stored whole, nothing else.  V3: info is the bare format (no xmax, no
 * successor, no trailer, no lock mode) and xinfo is 0; V2: one version, no
 * flags, no lock mode, no successor or token, dir[0] right after the
 * header.  The version must pass every check the walkers make of it (the
 * V2 one is the walker's version_plainly_valid), the tail check included:
 * it ends where the record ends.  True fills *v with the version, its bitmap and data
 * pointing into rec; false says only "not this shape, or doubtful": the
 * caller then takes the walker, which finds out what (damage included).
 * The fuzzer (compare_single_plain) checks that true implies the record
 * validates and that the walker returns the same version.
 */
#define MINIDB_PLAIN_DATA_FLAGS \
	(MINIDB_V_HINT_MASK | MINIDB_V_HASNULL | MINIDB_V_HASVARWIDTH | \
	 MINIDB_V_HASEXTERNAL)

static pg_attribute_always_inline bool
minidb_chain_single_plain(const char *rec, uint32 reclen,
						  MinidbVersionData *v)
{
	const MinidbVersionHeader *vh;
	uint16		flags;
	uint16		natts;
	uint32		start;
	uint32		bitmapoff;
	uint32		bitmaplen;
	uint32		dataoff;
	uint32		end;
	bool		ok;

	if (reclen < MINIDB_R3_INFO_PREFIX)
		return false;
	if ((uint8) rec[0] == MINIDB_FORMAT_V3)
	{
		/* info is the bare format: xinfo must be empty too */
		if (rec[1] != 0 || reclen > 0xFFFF)
			return false;
		start = 4;				/* TYPEALIGN(4, MINIDB_R3_INFO_PREFIX) */
		if (reclen < start + MINIDB_VERSION_HDRSZ)
			return false;
		vh = (const MinidbVersionHeader *) (rec + start);
		flags = vh->vh_flags;
		natts = vh->vh_natts;
		ok = (flags & ~(MINIDB_PLAIN_DATA_FLAGS | MINIDB_V_COMBOCID)) == 0;
		bitmapoff = start + MINIDB_VERSION_HDRSZ;
		bitmaplen = minidb_version_bitmaplen(flags, natts);
		dataoff = MAXALIGN(bitmapoff + bitmaplen);
		end = reclen;
	}
	else if ((uint8) rec[0] == MINIDB_FORMAT_V2)
	{
		const MinidbRecordHeader *hdr = (const MinidbRecordHeader *) rec;
		const MinidbVersionHeaderV1 *v1;

		start = MINIDB_V2_DATA_START(1);
		if (reclen < start + MINIDB_V1_VERSION_HDRSZ || reclen > 0xFFFF)
			return false;
		/*
		 * No successor field either: a moved marker whose flag was lost
		 * would pass for a data version (the walker refuses it), and a
		 * speculative token is rare enough to leave to the walker.
		 */
		ok = hdr->rh_flags == 0 && hdr->rh_nversions == 1 &&
			hdr->rh_len == reclen && hdr->rh_lockmode == MINIDB_LOCK_NONE &&
			hdr->rh_successor.ip_posid == 0 &&
			minidb_record_dir(rec)[0] == start;
		v1 = (const MinidbVersionHeaderV1 *) (rec + start);
		vh = (const MinidbVersionHeader *) v1;
		bitmapoff = start + MINIDB_V1_VERSION_HDRSZ;
		flags = v1->vh_flags;
		natts = v1->vh_natts;
		bitmaplen = minidb_version_bitmaplen(flags, natts);
		ok &= (flags & ~MINIDB_PLAIN_DATA_FLAGS) == 0;
		ok &= v1->vh_reserved == 0;
		ok &= v1->vh_hoff == MAXALIGN(MINIDB_V1_VERSION_HDRSZ + bitmaplen);
		/* the tail check: the version ends where the record ends */
		ok &= (uint32) start + v1->vh_len == reclen;
		dataoff = start + v1->vh_hoff;
		end = reclen;
	}
	else
		return false;
	ok &= vh->vh_xmin != InvalidTransactionId;
	ok &= !(flags & MINIDB_V_XMIN_ABORTED) ||
		!(flags & (MINIDB_V_XMIN_COMMITTED | MINIDB_V_FROZEN));
	ok &= natts <= MINIDB_MAX_NATTS;
	ok &= !(flags & MINIDB_V_HASNULL) || natts > 0;
	ok &= dataoff <= end;
	if (!ok)
		return false;
	/* V3: its null bitmap ends clean (V1, V2: vh_hoff says where) */
	if ((flags & MINIDB_V_HASNULL) && (uint8) rec[0] == MINIDB_FORMAT_V3 &&
		!minidb_v3_bitmap_clean(rec, bitmapoff, natts, dataoff))
		return false;
	v->xmin = vh->vh_xmin;
	v->cid = vh->vh_cid;
	v->flags = flags;
	v->natts = natts;
	v->bitmap = (flags & MINIDB_V_HASNULL) ?
		(const bits8 *) (rec + bitmapoff) : NULL;
	v->data = rec + dataoff;
	v->datalen = end - dataoff;
	return true;
}

/*
 * The newest reader's shortcut for a V3 record of any number of versions
 * (minidb_chain_single_plain's V3 arm, a trailer allowed): no xmax field,
 * no successor field, no lock mode (so no end, no lockers, no token), and
 * version 0 stored whole and not hinted aborted.  It makes the checks
 * minidb_chain_find_visible makes when its predicate accepts version 0:
 * the header, version 0 in full, and the tail check (the last version,
 * reached through the trailer, ends where the trailer begins), so
 * damage elsewhere in the middle is left, as for that read, to validate,
 * the iterator and the reads that visit it.  Its version is then the
 * visible one for a snapshot that sees version 0, with no xmax (no newer
 * version, no end).  Same contract as minidb_chain_single_plain: true
 * fills *v (pointing into rec); false means "not this shape, or
 * doubtful": the caller takes the walker.  The unit tests and the fuzzer
 * (compare_newest_plain) check true against validate and the walker.
 *
 * With older, it also copies the header of version 1 (the one before the
 * newest), whose xmin and command id tell when the row's visible version
 * replaced it: a sequential scan orders a page's rows by that
 * (minidb_scan.c, rows_order_by_age).  It then answers false for a record
 * of one version, and when that header would not lie between version 0
 * and the trailer; it reads the header's fields, not the version's data.
 */
extern bool minidb_v3_newest_plain(const char *rec, uint32 reclen,
								   MinidbVersionData *v,
								   MinidbVersionHeader *older);

/*
 * The same shortcut for the scans' per-page fast path, V3 records only
 * (V2 ones take the walker there): the version header in place, and where
 * the data starts and how long it is.
 */
#define MINIDB_R3_PLAIN_START	4	/* TYPEALIGN(4, MINIDB_R3_INFO_PREFIX) */

static pg_attribute_always_inline bool
minidb_v3_plain_record(const char *rec, uint32 reclen,
					   const MinidbVersionHeader **vhp,
					   uint32 *dataoff, uint32 *datalen)
{
	MinidbVersionData v;

	/* V3 first: the compiler then drops minidb_chain_single_plain's V2 arm */
	if (reclen < MINIDB_R3_INFO_PREFIX || (uint8) rec[0] != MINIDB_FORMAT_V3 ||
		!minidb_chain_single_plain(rec, reclen, &v))
		return false;
	*vhp = (const MinidbVersionHeader *) (rec + MINIDB_R3_PLAIN_START);
	*dataoff = (uint32) (v.data - rec);
	*datalen = v.datalen;
	return true;
}

/* The uint16 at p, which may be unaligned */
static inline uint16
minidb_read_u16(const char *p)
{
	uint16		v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * Version 0 of a V3 record at [start, end), as the newest reader's
 * shortcuts take it: stored whole, not hinted aborted, its flag bits
 * known (one mask), its attribute count and null bitmap consistent, its
 * data inside it.  True fills *v (pointing into rec); false says "not sure": the
 * caller takes the walker.
 */
static pg_attribute_always_inline bool
minidb_v3_head_whole(const char *rec, uint32 start, uint32 end,
					 MinidbVersionData *v)
{
	const MinidbVersionHeader *vh = (const MinidbVersionHeader *) (rec + start);
	TransactionId xmin = vh->vh_xmin;
	uint16		flags = vh->vh_flags;
	uint16		natts = vh->vh_natts;
	uint32		dataoff;

	if (xmin == InvalidTransactionId ||
		(flags & (~MINIDB_V3_FLAGS_MASK | MINIDB_V_ENC_MASK |
				  MINIDB_V_XMIN_ABORTED)) != 0 ||
		natts > MINIDB_MAX_NATTS)
		return false;
	dataoff = start + MINIDB_VERSION_HDRSZ;
	if (flags & MINIDB_V_HASNULL)
	{
		if (natts == 0)
			return false;
		dataoff += MINIDB_BITMAPLEN(natts);
	}
	dataoff = MAXALIGN(dataoff);
	if (dataoff > end)
		return false;
	if ((flags & MINIDB_V_HASNULL) &&
		!minidb_v3_bitmap_clean(rec, start + MINIDB_VERSION_HDRSZ, natts,
								dataoff))
		return false;
	v->xmin = xmin;
	v->cid = vh->vh_cid;
	v->flags = flags;
	v->natts = natts;
	v->bitmap = (flags & MINIDB_V_HASNULL) ?
		(const bits8 *) (rec + start + MINIDB_VERSION_HDRSZ) : NULL;
	v->data = rec + dataoff;
	v->datalen = end - dataoff;
	return true;
}

/*
 * The versions of a V3 record with a trailer whose header the caller has
 * checked (an even length within the format's limit), version 0 at start0
 * (where its optional fields leave it): the trailer, version 0 whole, and
 * the last version (the tail check), as minidb_v3_newest_plain checks them;
 * *v and *older as it gives them.  Version 0 as minidb_v3_head_whole
 * takes it, its flag tests one mask.  Each test returns at once (on the rows it serves every branch goes one way):
 * fewer instructions, and fewer values live, than a conjunction.
 */
static pg_attribute_always_inline bool
minidb_v3_many_from(const char *rec, uint32 reclen, uint32 start0,
					MinidbVersionData *v, MinidbVersionHeader *older)
{
	const MinidbVersionHeader *lh;
	uint32		n;
	uint32		trailer;
	uint32		end0;
	uint32		start1;
	uint32		lstart;
	uint32		lend;
	uint32		lbitmapend;
	uint16		lflags;
	uint16		lnatts;

	n = minidb_read_u16(rec + reclen - sizeof(uint16));
	if (n < 2 || n > MINIDB_MAX_VERSIONS ||
		start0 + n * MINIDB_VERSION_HDRSZ +
		(n + 1) * sizeof(uint16) > reclen)
		return false;
	trailer = reclen - (n + 1) * sizeof(uint16);

	/* version 0, whole, not hinted aborted (version_plain at 0) */
	end0 = minidb_read_u16(rec + trailer);
	if (end0 > trailer ||
		end0 < start0 + MINIDB_VERSION_HDRSZ)
		return false;
	if (!minidb_v3_head_whole(rec, start0, end0, v))
		return false;

	/* version 1's header lies between version 0 and the trailer */
	start1 = TYPEALIGN(4, end0);
	if (start1 + MINIDB_VERSION_HDRSZ > trailer)
		return false;

	/* the tail check: the last version through the trailer (check_last) */
	lstart = TYPEALIGN(4, minidb_read_u16(rec + trailer +
										  sizeof(uint16) * (n - 2)));
	lend = minidb_read_u16(rec + trailer + sizeof(uint16) * (n - 1));
	if (lstart < start0 + (n - 1) * MINIDB_VERSION_HDRSZ ||
		TYPEALIGN(sizeof(uint16), lend) != trailer ||
		lstart + MINIDB_VERSION_HDRSZ > lend)
		return false;
	lh = (const MinidbVersionHeader *) (rec + lstart);
	lflags = lh->vh_flags;
	lnatts = lh->vh_natts;
	/* known bits, an encoding that is FULL or DELTA, hints consistent */
	if (lh->vh_xmin == InvalidTransactionId ||
		(lflags & (~MINIDB_V3_FLAGS_MASK |
				   (MINIDB_V_ENC_MASK & ~MINIDB_V_ENC_DELTA))) != 0 ||
		((lflags & MINIDB_V_XMIN_ABORTED) &&
		 (lflags & (MINIDB_V_XMIN_COMMITTED | MINIDB_V_FROZEN))) ||
		lnatts > MINIDB_MAX_NATTS)
		return false;
	lbitmapend = lstart + MINIDB_VERSION_HDRSZ;
	if (lflags & MINIDB_V_HASNULL)
	{
		if (lnatts == 0)
			return false;
		lbitmapend += MINIDB_BITMAPLEN(lnatts);
	}
	if (!(lflags & MINIDB_V_ENC_DELTA))
	{
		if (MAXALIGN(lbitmapend) > lend)
			return false;
		if ((lflags & MINIDB_V_HASNULL) &&
			!minidb_v3_bitmap_clean(rec, lstart + MINIDB_VERSION_HDRSZ, lnatts,
									MAXALIGN(lbitmapend)))
			return false;
	}
	else
	{
		/* its prefix and suffix lengths inside it, the data not too long */
		uint32		affix = TYPEALIGN(sizeof(uint16), lbitmapend);

		if (affix + 2 * sizeof(uint16) > lend ||
			(uint32) minidb_read_u16(rec + affix) +
			minidb_read_u16(rec + affix + sizeof(uint16)) +
			(lend - affix - 2 * sizeof(uint16)) > MINIDB_MAX_VERSION_LEN)
			return false;
		if ((lflags & MINIDB_V_HASNULL) &&
			!minidb_v3_bitmap_clean(rec, lstart + MINIDB_VERSION_HDRSZ, lnatts,
									affix))
			return false;
	}
	memcpy(older, rec + start1, sizeof(MinidbVersionHeader));
	return true;
}

/*
 * minidb_v3_newest_plain(rec, reclen, v, older), older given, inline for
 * the sequential scan's per-row path (most rows of a page being written
 * hold two versions or more): the same checks (header_plain for a record
 * with a trailer, version_plain of version 0 and of the last version) and
 * the same answer, as the scan checks in a -DMINIDB_CHECK_FAST_PATH build
 * and the fuzzer checks (compare_newest_plain).
 */
static pg_attribute_always_inline bool
minidb_v3_newest_of_many(const char *rec, uint32 reclen,
						 MinidbVersionData *v, MinidbVersionHeader *older)
{
	/* the header: bare format with a trailer, xinfo 0 (header_plain) */
	if (reclen < MINIDB_R3_INFO_PREFIX + sizeof(uint16) ||
		reclen > MINIDB_R3_MAX_LEN || reclen % sizeof(uint16) != 0 ||
		(uint8) rec[0] != (MINIDB_FORMAT_V3 | MINIDB_R3_MULTI) || rec[1] != 0)
		return false;
	return minidb_v3_many_from(rec, reclen, MINIDB_R3_PLAIN_START, v, older);
}

/*
 * A row lock left on a row (FOR KEY SHARE, FOR SHARE: a foreign key's
 * check locks the parent row) is the record's xmax field, flagged
 * lock-only.  It changes nothing in which version a reader sees, but
 * version 0 starts at offset 8 instead of 4, and the tuple shows the
 * lockers as its xmax.  The newest reader's shortcut for such a record:
 * minidb_v3_newest_plain's shape but for that one field, of one version or
 * more.  No successor field (so no token), no end (the xmax only locks),
 * version 0 stored whole and not hinted aborted.  It makes the checks the
 * fast walker makes when its predicate accepts version 0 (check_header's
 * for this shape, version 0, the tail check), and gives the lockers as
 * minidb_record_get_lockers reads them, for minidb_tuple_set_lockers.
 * Version 1's header goes to *older, whose vh_xmin is invalid for a
 * record of one version.  False means "not this shape, or doubtful".
 * The unit tests and the fuzzer (compare_newest_locked) check true
 * against validate, the walkers and the lockers' reader; minidb_scan.c
 * takes it inline (minidb_v3_locked_newest).
 */
#define MINIDB_R3_LOCKED_START	8	/* TYPEALIGN(4, info, xinfo, xmax) */

extern bool minidb_v3_newest_locked(const char *rec, uint32 reclen,
									MinidbVersionData *v,
									MinidbVersionHeader *older,
									MinidbLockers *lk);

/*
 * minidb_v3_newest_locked, inline, for the sequential scan's per-row path
 * (every teller and branch row of pgbench --foreign-keys is such a record):
 * the same answer, as the scan checks in a -DMINIDB_CHECK_FAST_PATH build
 * and the fuzzer checks.  The header as check_header accepts it with a
 * lock-only xmax and no successor field: a single locker (a normal xid,
 * its mode in info's top bits) or a multixact of lockers (no mode bits),
 * perhaps hinted aborted (the lockers read the same); then the versions
 * at MINIDB_R3_LOCKED_START as minidb_v3_newest_of_many reads them at
 * MINIDB_R3_PLAIN_START.
 */
static pg_attribute_always_inline bool
minidb_v3_locked_newest(const char *rec, uint32 reclen, MinidbVersionData *v,
						MinidbVersionHeader *older, MinidbLockers *lk)
{
	const uint8 mode_bits = (uint8) (0xFF << MINIDB_R3_MODE_SHIFT);
	uint8		info;
	uint8		xinfo;
	TransactionId xmax;

	if (reclen < MINIDB_R3_LOCKED_START + MINIDB_VERSION_HDRSZ ||
		reclen > MINIDB_R3_MAX_LEN)
		return false;
	info = (uint8) rec[0];
	xinfo = (uint8) rec[1];
	if ((info & ~(MINIDB_R3_MULTI | mode_bits)) !=
		(MINIDB_FORMAT_V3 | MINIDB_R3_XMAX) ||
		(xinfo & ~(MINIDB_R3X_XMAX_MULTI | MINIDB_R3X_INVALID)) !=
		MINIDB_R3X_LOCK_ONLY)
		return false;
	memcpy(&xmax, rec + MINIDB_R3_INFO_PREFIX, sizeof(xmax));
	if (xinfo & MINIDB_R3X_XMAX_MULTI)
	{
		/* check_header: a mode only for a single locker */
		if ((info & mode_bits) != 0 || xmax == InvalidTransactionId)
			return false;
		lk->mode = MINIDB_LOCK_KEYSHARE;	/* as v3_get_lockers says */
		lk->multi = true;
	}
	else
	{
		/* no writer locks a row as the bootstrap or frozen xid */
		if (!TransactionIdIsNormal(xmax))
			return false;
		lk->mode = (uint16) ((info >> MINIDB_R3_MODE_SHIFT) + 1);
		lk->multi = false;
	}
	lk->xid = xmax;
	lk->with_updater = false;

	if (info & MINIDB_R3_MULTI)
		return reclen % sizeof(uint16) == 0 &&
			minidb_v3_many_from(rec, reclen, MINIDB_R3_LOCKED_START, v,
								older);
	/* one version: it ends where the record does (the tail check) */
	if (!minidb_v3_head_whole(rec, MINIDB_R3_LOCKED_START, reclen, v))
		return false;
	older->vh_xmin = InvalidTransactionId;
	return true;
}

#endif							/* MINIDB_CHAIN_H */
