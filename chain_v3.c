/*-------------------------------------------------------------------------
 *
 * chain_v3.c
 *	  The compact record format (V3): layout, checks, walkers, builders.
 *
 * The layout is drawn in chain.h.  What a valid V3 record looks like
 * (checked by v3_validate, the reference walker and the iterator, in this
 * order; the fast walker checks the same fields of what it visits):
 *
 *	the header (errors at version -1)
 *	  length at least the header, at most MINIDB_R3_MAX_LEN;
 *	  info: format 3, known bits; the lock mode bits only for a lock-only
 *	  single xid;
 *	  xinfo: no bit without the xmax field, except SPEC; a lock-only xmax
 *	  has no end bits (MOVED, KEYS_UPDATED, MOVED_PART, COMMITTED); not both
 *	  COMMITTED and INVALID; KEYS_UPDATED and MOVED_PART only on a move;
 *	  a move to another partition has no successor field, any other move
 *	  has one holding a valid TID; SPEC needs the successor field,
 *	  holding offset MINIDB_SPEC_TOKEN_OFFSET (as every writer stores a
 *	  token); a successor field that is neither a move's nor a token
 *	  holds an invalid TID (left behind by a finished speculative
 *	  insertion);
 *	  xmax, when present, is a valid transaction id;
 *	  with MINIDB_R3_MULTI: an even length, 2 <= n <= MINIDB_MAX_VERSIONS,
 *	  and room for the trailer and n minimal versions; without it one
 *	  version, or none when the record is only the end of a row that every
 *	  snapshot sees gone (the header alone, awaiting VACUUM).
 *	each version i (errors at the index walkers give it: i, plus one when
 *	the row's end is the virtual marker 0)
 *	  it starts at 4-alignment after the previous one (version 0 after the
 *	  header) and ends (the trailer's end[i], or the record's end) at least
 *	  a version header later, inside the record, and the last one ends
 *	  where the trailer begins (rounded up to 2);
 *	  vh_xmin valid; vh_flags within MINIDB_V3_FLAGS_MASK, hints
 *	  consistent, encoding FULL or DELTA, DELTA never on version 0;
 *	  vh_natts <= MINIDB_MAX_NATTS, a null bitmap only with attributes,
 *	  and zeros after it up to the data (FULL) or the affix (DELTA)
 *	  (minidb_v3_bitmap_clean);
 *	  FULL: the data starts at MAXALIGN after the bitmap, inside the version;
 *	  DELTA: the prefix and suffix lengths (uint16 each, at 2-alignment
 *	  after the bitmap) lie inside the version, and prefix + suffix does not
 *	  exceed the data length of version i-1 (the version it is rebuilt from).
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#ifdef MINIDB_STANDALONE
#include "postgres_fe.h"
#include "chain_shim.h"
#else
#include "postgres.h"
#endif

#include "access/transam.h"
#include "chain_int.h"

#define set_error minidb_chain_set_error

#define R3_XMAX_SIZE		sizeof(TransactionId)
#define R3_SUCC_SIZE		sizeof(ItemPointerData)
#define R3_VERSION_ALIGN	4
#define R3_AFFIX_SIZE		(2 * sizeof(uint16))
#define R3_DELTA_SAVING		8	/* see delta_saves_enough */
#define R3_XINFO_END_BITS	(MINIDB_R3X_MOVED | MINIDB_R3X_KEYS_UPDATED | \
							 MINIDB_R3X_MOVED_PART)
#define R3_PREVLEN_UNKNOWN	PG_UINT32_MAX

StaticAssertDecl(sizeof(MinidbVersionHeader) == 12,
				 "a V3 version header is 12 bytes");
StaticAssertDecl(offsetof(MinidbVersionHeaderV1, vh_natts) ==
				 offsetof(MinidbVersionHeader, vh_natts),
				 "a V1 version header begins with a V3 one");
StaticAssertDecl(R3_SUCC_SIZE == 6, "the successor field is 6 bytes");
/* The encodings other than FULL and DELTA are those with this bit */
#define R3_ENC_UNKNOWN		(MINIDB_V_ENC_MASK & ~MINIDB_V_ENC_DELTA)
StaticAssertDecl(MINIDB_V_ENC_FULL == 0 &&
				 (MINIDB_V_ENC_DELTA & R3_ENC_UNKNOWN) == 0 &&
				 (MINIDB_V_ENC_DELTA | R3_ENC_UNKNOWN) == MINIDB_V_ENC_MASK &&
				 (R3_ENC_UNKNOWN & (R3_ENC_UNKNOWN - 1)) == 0,
				 "an encoding is FULL or DELTA exactly when one bit is clear");

/* A V3 record header, parsed and checked */
typedef struct V3Header
{
	uint8		info;
	uint8		xinfo;
	TransactionId xmax;
	ItemPointerData succ;
	uint32		start0;			/* where version 0 begins */
	uint32		trailer;		/* where end[] begins; reclen without one */
	int			n;				/* data versions */
	bool		has_end;		/* xmax ends the row: a virtual marker 0 */
	uint32		reclen;
} V3Header;

/* One data version, parsed and checked */
typedef struct V3Version
{
	uint32		start;
	uint32		end;
	const MinidbVersionHeader *vh;
	uint32		bitmapoff;
	bool		delta;
	uint32		dataoff;		/* FULL: the data; DELTA: the affix */
	uint32		prefix;			/* DELTA */
	uint32		suffix;
	uint32		midoff;
	uint32		midlen;
	uint32		datalen;		/* bytes of data it stands for */
} V3Version;


/* ----------------------------------------------------------------
 *		Reading the layout
 * ----------------------------------------------------------------
 */

static inline uint32
prefix_len(uint8 info)
{
	return MINIDB_R3_INFO_PREFIX +
		((info & MINIDB_R3_XMAX) ? R3_XMAX_SIZE : 0) +
		((info & MINIDB_R3_SUCC) ? R3_SUCC_SIZE : 0);
}

static inline uint32
succ_offset(uint8 info)
{
	return MINIDB_R3_INFO_PREFIX + ((info & MINIDB_R3_XMAX) ? R3_XMAX_SIZE : 0);
}

/* Where data version i ends (the trailer, or the record's end) */
static inline uint32
version_end(const char *rec, const V3Header *h, int i)
{
	if (h->n <= 1)
		return h->trailer;
	return minidb_read_u16(rec + h->trailer + sizeof(uint16) * i);
}

/* The index walkers give data version i */
static inline int
walker_index(const V3Header *h, int i)
{
	return i + (h->has_end ? 1 : 0);
}

/* The header, checked.  Reads nothing past reclen. */
static bool
check_header(const char *rec, uint32 reclen, V3Header *h,
			 MinidbChainError *err)
{
	uint8		info;
	uint8		xinfo;
	uint32		prefix;
	bool		lock_only;

	if (reclen < MINIDB_R3_INFO_PREFIX)
		return set_error(err, -1, "r3_len",
						 "record length %u is shorter than the record header (%u bytes)",
						 reclen, (uint32) MINIDB_R3_INFO_PREFIX);
	if (reclen > MINIDB_R3_MAX_LEN)
		return set_error(err, -1, "r3_len",
						 "record of %u bytes exceeds the format %u limit of %u bytes",
						 reclen, MINIDB_FORMAT_V3, MINIDB_R3_MAX_LEN);
	info = (uint8) rec[0];
	xinfo = (uint8) rec[1];
	h->reclen = reclen;
	h->info = info;
	h->xinfo = xinfo;
	prefix = prefix_len(info);
	if (reclen < prefix)
		return set_error(err, -1, "r3_len",
						 "record length %u is shorter than its header (%u bytes)",
						 reclen, prefix);

	lock_only = (xinfo & MINIDB_R3X_LOCK_ONLY) != 0;
	if (!(info & MINIDB_R3_XMAX))
	{
		if (xinfo & ~MINIDB_R3X_SPEC)
			return set_error(err, -1, "r3_xinfo",
							 "flag bits 0x%02x without an xmax field",
							 xinfo & ~MINIDB_R3X_SPEC);
		if (info >> MINIDB_R3_MODE_SHIFT)
			return set_error(err, -1, "r3_info",
							 "a lock mode without an xmax field");
		h->xmax = InvalidTransactionId;
	}
	else
	{
		memcpy(&h->xmax, rec + MINIDB_R3_INFO_PREFIX, R3_XMAX_SIZE);
		if (h->xmax == InvalidTransactionId)
			return set_error(err, -1, "r3_xmax",
							 "the xmax field holds InvalidTransactionId");
		/* no writer ends or locks a row as the bootstrap or frozen xid */
		if (!(xinfo & MINIDB_R3X_XMAX_MULTI) &&
			!TransactionIdIsNormal(h->xmax))
			return set_error(err, -1, "r3_xmax",
							 "the xmax field holds the special transaction ID %u",
							 h->xmax);
		if ((xinfo & MINIDB_R3X_COMMITTED) && (xinfo & MINIDB_R3X_INVALID))
			return set_error(err, -1, "r3_xinfo",
							 "xmax is hinted both committed and aborted");
		if (lock_only &&
			(xinfo & (R3_XINFO_END_BITS | MINIDB_R3X_COMMITTED)))
			return set_error(err, -1, "r3_xinfo",
							 "a lock-only xmax carries end flags 0x%02x",
							 xinfo & (R3_XINFO_END_BITS | MINIDB_R3X_COMMITTED));
		if ((info >> MINIDB_R3_MODE_SHIFT) &&
			(!lock_only || (xinfo & MINIDB_R3X_XMAX_MULTI)))
			return set_error(err, -1, "r3_info",
							 "a lock mode on an xmax that is not a single locker");
	}
	if ((xinfo & (MINIDB_R3X_KEYS_UPDATED | MINIDB_R3X_MOVED_PART)) &&
		!(xinfo & MINIDB_R3X_MOVED))
		return set_error(err, -1, "r3_xinfo",
						 "keys-updated or moved-partition flag on a row that did not move");
	if ((xinfo & MINIDB_R3X_SPEC) && !(info & MINIDB_R3_SUCC))
		return set_error(err, -1, "r3_xinfo",
						 "a speculative insertion without its token");
	if (info & MINIDB_R3_SUCC)
	{
		memcpy(&h->succ, rec + succ_offset(info), R3_SUCC_SIZE);
		if (xinfo & MINIDB_R3X_MOVED_PART)
			return set_error(err, -1, "r3_successor",
							 "a row moved to another partition has a successor field");
		if ((xinfo & MINIDB_R3X_MOVED) && (xinfo & MINIDB_R3X_SPEC))
			return set_error(err, -1, "r3_successor",
							 "a moved row's successor field holds a speculative token");
		/* every writer stores a token as heap does: offset SpecTokenOffsetNumber */
		if ((xinfo & MINIDB_R3X_SPEC) &&
			h->succ.ip_posid != MINIDB_SPEC_TOKEN_OFFSET)
			return set_error(err, -1, "r3_successor",
							 "a speculative token's field holds offset %u, not %u",
							 h->succ.ip_posid, MINIDB_SPEC_TOKEN_OFFSET);
		if ((xinfo & MINIDB_R3X_MOVED) && h->succ.ip_posid == 0)
			return set_error(err, -1, "r3_successor",
							 "moved row has no valid successor TID");
		if (!(xinfo & (MINIDB_R3X_MOVED | MINIDB_R3X_SPEC)) &&
			h->succ.ip_posid != 0)
			return set_error(err, -1, "r3_successor",
							 "a successor TID on a row that did not move");
	}
	else
	{
		ItemPointerSetInvalid(&h->succ);
		if ((xinfo & MINIDB_R3X_MOVED) && !(xinfo & MINIDB_R3X_MOVED_PART))
			return set_error(err, -1, "r3_successor",
							 "moved row has no successor field");
	}
	h->has_end = (info & MINIDB_R3_XMAX) && !lock_only;
	h->start0 = TYPEALIGN(R3_VERSION_ALIGN, prefix);

	if (info & MINIDB_R3_MULTI)
	{
		uint32		n;

		if (reclen % sizeof(uint16) != 0 || reclen < prefix + sizeof(uint16))
			return set_error(err, -1, "r3_trailer",
							 "a record with a trailer has an odd length %u",
							 reclen);
		n = minidb_read_u16(rec + reclen - sizeof(uint16));
		if (n < 2)
			return set_error(err, -1, "r3_trailer",
							 "a trailer for %u versions: a record with a trailer holds at least two",
							 n);
		if (n > MINIDB_MAX_VERSIONS)
			return set_error(err, -1, "r3_trailer",
							 "%u versions exceed the limit of %u", n,
							 MINIDB_MAX_VERSIONS);
		if ((uint64) h->start0 + (uint64) n * MINIDB_VERSION_HDRSZ +
			(uint64) (n + 1) * sizeof(uint16) > reclen)
			return set_error(err, -1, "r3_trailer",
							 "%u versions cannot fit in a record of %u bytes",
							 n, reclen);
		h->n = (int) n;
		h->trailer = reclen - (n + 1) * sizeof(uint16);
	}
	else
	{
		h->trailer = reclen;
		if (reclen == prefix && h->has_end)
			h->n = 0;			/* only the row's end is left */
		else if (reclen < (uint64) h->start0 + MINIDB_VERSION_HDRSZ)
			return set_error(err, -1, "r3_len",
							 "record of %u bytes ends before its version begins at %u",
							 reclen, h->start0);
		else
			h->n = 1;
	}
	return true;
}

/*
 * check_version's error for padding after a null bitmap that is not zero
 * (minidb_v3_bitmap_clean)
 */
static bool
bitmap_error(const V3Version *v, int index, MinidbChainError *err)
{
	uint32		bitmapend = v->bitmapoff + MINIDB_BITMAPLEN(v->vh->vh_natts);

	return set_error(err, index, "vh_flags",
					 "null bitmap flagged, but the padding after it (bytes %u to %u) is not zero",
					 bitmapend, v->dataoff - 1);
}

/*
 * Data version i at [start, end), checked.  prevlen is version i-1's data
 * length, or R3_PREVLEN_UNKNOWN when the caller did not visit it (the
 * prefix/suffix bound is then left to the reader that does).
 */
static bool
check_version(const char *rec, const V3Header *h, int i, uint32 start,
			  uint32 end, uint32 prevlen, V3Version *v, MinidbChainError *err)
{
	int			index = walker_index(h, i);
	const MinidbVersionHeader *vh;
	uint16		flags;
	uint32		bitmapend;

	if (h->n >= 2 &&
		(end > h->trailer ||
		 (i == h->n - 1 && TYPEALIGN(sizeof(uint16), end) != h->trailer)))
		return set_error(err, index, "r3_trailer",
						 "version %d ends at %u; the trailer begins at %u",
						 index, end, h->trailer);
	if ((uint64) start + MINIDB_VERSION_HDRSZ > end)
		return set_error(err, index, "r3_trailer",
						 "version %d starts at %u but ends at %u, before its header ends",
						 index, start, end);
	vh = (const MinidbVersionHeader *) (rec + start);
	flags = vh->vh_flags;
	if (vh->vh_xmin == InvalidTransactionId)
		return set_error(err, index, "vh_xmin",
						 "creating transaction is InvalidTransactionId");
	if (flags & ~MINIDB_V3_FLAGS_MASK)
		return set_error(err, index, "vh_flags", "unknown flag bits 0x%04x",
						 flags & ~MINIDB_V3_FLAGS_MASK);
	if ((flags & MINIDB_V_ENC_MASK) != MINIDB_V_ENC_FULL &&
		(flags & MINIDB_V_ENC_MASK) != MINIDB_V_ENC_DELTA)
		return set_error(err, index, "vh_flags", "unknown data encoding %u",
						 (flags & MINIDB_V_ENC_MASK) >> 8);
	if ((flags & MINIDB_V_XMIN_COMMITTED) && (flags & MINIDB_V_XMIN_ABORTED))
		return set_error(err, index, "vh_flags",
						 "xmin is hinted both committed and aborted");
	if ((flags & MINIDB_V_FROZEN) && (flags & MINIDB_V_XMIN_ABORTED))
		return set_error(err, index, "vh_flags",
						 "xmin is hinted both frozen and aborted");
	if (vh->vh_natts > MINIDB_MAX_NATTS)
		return set_error(err, index, "vh_natts",
						 "%u attributes exceed the limit of %u",
						 vh->vh_natts, MINIDB_MAX_NATTS);
	if ((flags & MINIDB_V_HASNULL) && vh->vh_natts == 0)
		return set_error(err, index, "vh_flags",
						 "null bitmap flagged on a version without attributes");

	v->start = start;
	v->end = end;
	v->vh = vh;
	v->bitmapoff = start + MINIDB_VERSION_HDRSZ;
	bitmapend = v->bitmapoff + minidb_version_bitmaplen(flags, vh->vh_natts);
	v->delta = (flags & MINIDB_V_ENC_MASK) == MINIDB_V_ENC_DELTA;
	if (!v->delta)
	{
		v->dataoff = MAXALIGN(bitmapend);
		if (v->dataoff > end)
			return set_error(err, index, "vh_natts",
							 "header and null bitmap end at %u, past the version end %u",
							 v->dataoff, end);
		if ((flags & MINIDB_V_HASNULL) &&
			!minidb_v3_bitmap_clean(rec, v->bitmapoff, vh->vh_natts,
									v->dataoff))
			return bitmap_error(v, index, err);
		v->datalen = end - v->dataoff;
		v->prefix = v->suffix = v->midoff = v->midlen = 0;
		return true;
	}
	if (i == 0)
		return set_error(err, index, "vh_flags",
						 "the newest version is stored as a difference");
	v->dataoff = TYPEALIGN(sizeof(uint16), bitmapend);
	if ((uint64) v->dataoff + R3_AFFIX_SIZE > end)
		return set_error(err, index, "vh_natts",
						 "header, null bitmap and affix end at %u, past the version end %u",
						 v->dataoff + (uint32) R3_AFFIX_SIZE, end);
	if ((flags & MINIDB_V_HASNULL) &&
		!minidb_v3_bitmap_clean(rec, v->bitmapoff, vh->vh_natts, v->dataoff))
		return bitmap_error(v, index, err);
	v->prefix = minidb_read_u16(rec + v->dataoff);
	v->suffix = minidb_read_u16(rec + v->dataoff + sizeof(uint16));
	v->midoff = v->dataoff + R3_AFFIX_SIZE;
	v->midlen = end - v->midoff;
	if (prevlen != R3_PREVLEN_UNKNOWN && v->prefix + v->suffix > prevlen)
		return set_error(err, index, "r3_delta",
						 "prefix %u and suffix %u exceed the %u data bytes of the newer version",
						 v->prefix, v->suffix, prevlen);
	v->datalen = v->prefix + v->suffix + v->midlen;
	if (v->datalen > MINIDB_MAX_VERSION_LEN)
		return set_error(err, index, "r3_delta",
						 "%u data bytes exceed the limit of %u",
						 v->datalen, (uint32) MINIDB_MAX_VERSION_LEN);
	return true;
}

/* Where data version i begins, given where version i-1 ended */
static inline uint32
next_start(const V3Header *h, int i, uint32 prev_end)
{
	return i == 0 ? h->start0 : TYPEALIGN(R3_VERSION_ALIGN, prev_end);
}

/*
 * The readers' shortcuts for the checks above, for the hot paths of the
 * fast walker and the search: the same conditions, evaluated together
 * with few branches and no error text.  True only when the detailed check
 * would accept, with the same result; false says "not sure": the caller
 * then runs the detailed check, which reports the damage (or accepts a
 * shape the shortcut does not cover).  -DMINIDB_CHECK_FAST_PATH (unit
 * tests, fuzzer) runs both and fails loudly if they ever disagree.
 */

/*
 * The header of a record without an xmax or successor field (no end, no
 * lockers, no token), which most records are: check_header's tests for
 * that shape, the trailer's included.
 */
static pg_attribute_always_inline bool
header_plain(const char *rec, uint32 reclen, V3Header *h)
{
	uint8		info;
	uint32		n;
	bool		ok;

	if (unlikely(reclen < MINIDB_R3_INFO_PREFIX + sizeof(uint16) ||
				 reclen > MINIDB_R3_MAX_LEN))
		return false;
	info = (uint8) rec[0];
	if ((info & ~MINIDB_R3_MULTI) != MINIDB_FORMAT_V3 || rec[1] != 0)
		return false;
	h->reclen = reclen;
	h->info = info;
	h->xinfo = 0;
	h->xmax = InvalidTransactionId;
	ItemPointerSetInvalid(&h->succ);
	h->has_end = false;
	h->start0 = TYPEALIGN(R3_VERSION_ALIGN, MINIDB_R3_INFO_PREFIX);
	if (!(info & MINIDB_R3_MULTI))
	{
		h->trailer = reclen;
		h->n = 1;
		return reclen >= (uint64) h->start0 + MINIDB_VERSION_HDRSZ;
	}
	n = minidb_read_u16(rec + reclen - sizeof(uint16));
	ok = reclen % sizeof(uint16) == 0;
	ok &= n >= 2 && n <= MINIDB_MAX_VERSIONS;
	ok &= (uint64) h->start0 + (uint64) n * MINIDB_VERSION_HDRSZ +
		(uint64) (n + 1) * sizeof(uint16) <= reclen;
	h->n = (int) n;
	h->trailer = reclen - (n + 1) * sizeof(uint16);
	return ok;
}

/* check_header, through the shortcut when it applies */
static pg_attribute_always_inline bool
read_header(const char *rec, uint32 reclen, V3Header *h,
			MinidbChainError *err)
{
#ifndef MINIDB_CHECK_FAST_PATH
	if (likely(header_plain(rec, reclen, h)))
		return true;
#else
	if (header_plain(rec, reclen, h))
	{
		V3Header	d;

		if (!check_header(rec, reclen, &d, err))
			elog(ERROR, "header_plain accepted a V3 header that check_header refuses: field \"%s\": %s",
				 err ? err->field : "?", err ? err->detail : "?");
		if (d.reclen != h->reclen || d.info != h->info ||
			d.xinfo != h->xinfo || d.xmax != h->xmax ||
			d.start0 != h->start0 || d.trailer != h->trailer ||
			d.n != h->n || d.has_end != h->has_end ||
			memcmp(&d.succ, &h->succ, sizeof(ItemPointerData)) != 0)
			elog(ERROR, "header_plain and check_header disagree on a V3 header");
		return true;
	}
#endif
	return check_header(rec, reclen, h, err);
}

/* check_version's tests, without a branch per test and without text */
static pg_attribute_always_inline bool
version_plain(const char *rec, const V3Header *h, int i, uint32 start,
			  uint32 end, uint32 prevlen, V3Version *v)
{
	const MinidbVersionHeader *vh;
	uint16		flags;
	uint16		natts;
	uint32		bitmapend;
	bool		ok;

	/* its place: inside the record, before the trailer, a header long */
	ok = h->n < 2 ||
		(end <= h->trailer &&
		 (i != h->n - 1 || TYPEALIGN(sizeof(uint16), end) == h->trailer));
	ok &= (uint64) start + MINIDB_VERSION_HDRSZ <= end;
	if (!ok)
		return false;
	vh = (const MinidbVersionHeader *) (rec + start);
	flags = vh->vh_flags;
	natts = vh->vh_natts;
	ok = vh->vh_xmin != InvalidTransactionId;
	/* known bits, and an encoding that is FULL or DELTA (R3_ENC_UNKNOWN) */
	ok &= (flags & (~MINIDB_V3_FLAGS_MASK | R3_ENC_UNKNOWN)) == 0;
	ok &= !(flags & MINIDB_V_XMIN_ABORTED) ||
		!(flags & (MINIDB_V_XMIN_COMMITTED | MINIDB_V_FROZEN));
	ok &= natts <= MINIDB_MAX_NATTS;
	ok &= !(flags & MINIDB_V_HASNULL) || natts > 0;
	v->start = start;
	v->end = end;
	v->vh = vh;
	v->bitmapoff = start + MINIDB_VERSION_HDRSZ;
	bitmapend = v->bitmapoff + minidb_version_bitmaplen(flags, natts);
	v->delta = (flags & MINIDB_V_ENC_MASK) == MINIDB_V_ENC_DELTA;
	if (likely(!v->delta))
	{
		v->dataoff = MAXALIGN(bitmapend);
		ok &= v->dataoff <= end;
		v->datalen = end - v->dataoff;
		v->prefix = v->suffix = v->midoff = v->midlen = 0;
		if (unlikely(flags & MINIDB_V_HASNULL) && ok)
			ok = minidb_v3_bitmap_clean(rec, v->bitmapoff, natts, v->dataoff);
		return ok;
	}
	v->dataoff = TYPEALIGN(sizeof(uint16), bitmapend);
	ok &= i != 0;
	ok &= (uint64) v->dataoff + R3_AFFIX_SIZE <= end;
	if (!ok)
		return false;
	if ((flags & MINIDB_V_HASNULL) &&
		!minidb_v3_bitmap_clean(rec, v->bitmapoff, natts, v->dataoff))
		return false;
	v->prefix = minidb_read_u16(rec + v->dataoff);
	v->suffix = minidb_read_u16(rec + v->dataoff + sizeof(uint16));
	v->midoff = v->dataoff + R3_AFFIX_SIZE;
	v->midlen = end - v->midoff;
	ok &= prevlen == R3_PREVLEN_UNKNOWN || v->prefix + v->suffix <= prevlen;
	v->datalen = v->prefix + v->suffix + v->midlen;
	ok &= v->datalen <= MINIDB_MAX_VERSION_LEN;
	return ok;
}

/* check_version, through the shortcut when it applies */
static pg_attribute_always_inline bool
read_version(const char *rec, const V3Header *h, int i, uint32 start,
			 uint32 end, uint32 prevlen, V3Version *v, MinidbChainError *err)
{
#ifndef MINIDB_CHECK_FAST_PATH
	if (likely(version_plain(rec, h, i, start, end, prevlen, v)))
		return true;
#else
	if (version_plain(rec, h, i, start, end, prevlen, v))
	{
		V3Version	d;

		if (!check_version(rec, h, i, start, end, prevlen, &d, err))
			elog(ERROR, "version_plain accepted V3 version %d that check_version refuses: field \"%s\": %s",
				 walker_index(h, i), err ? err->field : "?",
				 err ? err->detail : "?");
		if (d.start != v->start || d.end != v->end || d.vh != v->vh ||
			d.bitmapoff != v->bitmapoff || d.delta != v->delta ||
			d.dataoff != v->dataoff || d.prefix != v->prefix ||
			d.suffix != v->suffix || d.midoff != v->midoff ||
			d.midlen != v->midlen || d.datalen != v->datalen)
			elog(ERROR, "version_plain and check_version disagree on V3 version %d",
				 walker_index(h, i));
		return true;
	}
#endif
	return check_version(rec, h, i, start, end, prevlen, v, err);
}

/*
 * The last data version alone, without the walk to it (the fast walker's
 * tail check): its place from the trailer, no earlier than n-1 minimal
 * versions allow, its header, its end at the trailer.
 */
static bool
check_last(const char *rec, const V3Header *h, MinidbChainError *err)
{
	int			last = h->n - 1;
	uint32		start;
	uint32		lowest;
	V3Version	v;

	if (h->n < 2)
		return true;
	start = TYPEALIGN(R3_VERSION_ALIGN, version_end(rec, h, last - 1));
	lowest = h->start0 + (uint32) last * MINIDB_VERSION_HDRSZ;
	if (start < lowest)
		return set_error(err, walker_index(h, last), "r3_trailer",
						 "version %d starts at %u, before %u where %d versions end at the least",
						 walker_index(h, last), start, lowest, last);
	return read_version(rec, h, last, start, version_end(rec, h, last),
						R3_PREVLEN_UNKNOWN, &v, err);
}

/*
 * Every version, in order, of a record whose header h checked: by the
 * detailed checks, or with shortcut through read_version (the same
 * answers, the detailed check only where the shortcut is not sure)
 */
static pg_attribute_always_inline bool
walk_versions(const char *rec, const V3Header *h, V3Version *versions,
			  MinidbChainError *err, bool shortcut)
{
	uint32		end = 0;
	uint32		prevlen = R3_PREVLEN_UNKNOWN;

	for (int i = 0; i < h->n; i++)
	{
		V3Version	v;
		uint32		start = next_start(h, i, end);

		end = version_end(rec, h, i);
		if (!(shortcut ?
			  read_version(rec, h, i, start, end, prevlen, &v, err) :
			  check_version(rec, h, i, start, end, prevlen, &v, err)))
			return false;
		prevlen = v.datalen;
		if (versions)
			versions[i] = v;
	}
	return true;
}

static bool
check_versions(const char *rec, const V3Header *h, V3Version *versions,
			   MinidbChainError *err)
{
	return walk_versions(rec, h, versions, err, false);
}

/* The header, then every version; versions[] (if given) gets them */
static bool
check_all(const char *rec, uint32 reclen, V3Header *h, V3Version *versions,
		  MinidbChainError *err)
{
	return check_header(rec, reclen, h, err) &&
		check_versions(rec, h, versions, err);
}

bool
v3_validate(const char *rec, uint32 reclen, MinidbChainError *err)
{
	V3Header	h;

	return check_all(rec, reclen, &h, NULL, err);
}

/*
 * A record that a builder reads while it writes out: a private copy when
 * the two overlap (builders may write in place), else rec itself.
 */
static const char *
source_copy(char *out, uint32 outsize, const char *rec, uint32 reclen)
{
	char	   *copy;

	if (out == NULL || out >= rec + reclen || rec >= out + outsize)
		return rec;
	copy = palloc(Max(reclen, 1));
	memcpy(copy, rec, reclen);
	return copy;
}

static void header_without_end(const V3Header *h, uint8 *info, uint8 *xinfo,
							   TransactionId *xmax, ItemPointerData *succ);

/*
 * Parse every version of a record known to be valid: into local (nlocal
 * entries) when they fit, else into a palloc'd array; callers pfree what
 * is not local.  Writers prepending to a row of a few versions, the
 * common case, then allocate nothing for it.
 */
static V3Version *
parse_valid(const char *rec, uint32 reclen, V3Header *h, V3Version *local,
			int nlocal)
{
	MinidbChainError err;
	V3Version  *versions;

	/*
	 * Writers check the versions a read visited, not always all: a damaged
	 * one is found here, and reported as reads report it.
	 */
	if (!read_header(rec, reclen, h, &err))
	{
#ifndef MINIDB_STANDALONE
		minidb_record_damaged(rec, &err);
#endif
		elog(ERROR, "minidb V3 record is damaged: field \"%s\": %s",
			 err.field, err.detail);
	}
	if (local != NULL && h->n <= nlocal)
		versions = local;
	else
		versions = palloc(sizeof(V3Version) * Max(h->n, 1));
	if (!walk_versions(rec, h, versions, &err, true))
	{
#ifndef MINIDB_STANDALONE
		minidb_record_damaged(rec, &err);
#endif
		elog(ERROR, "minidb V3 record is damaged: version %d, field \"%s\": %s",
			 err.version, err.field, err.detail);
	}
	return versions;
}


/* ----------------------------------------------------------------
 *		The virtual marker and record-level fields
 * ----------------------------------------------------------------
 */

/* The marker version 0 that a record's end stands for, into *ref */
static void
synth_marker(char *rec, const V3Header *h, MinidbVersionRef *ref)
{
	MinidbVirtualMarker *vm = &ref->virt;
	uint16		flags = MINIDB_V_VIRTUAL;

	flags |= (h->xinfo & MINIDB_R3X_MOVED) ? MINIDB_V_MOVED : MINIDB_V_TOMBSTONE;
	if (h->xinfo & MINIDB_R3X_KEYS_UPDATED)
		flags |= MINIDB_V_KEYS_UPDATED;
	if (h->xinfo & MINIDB_R3X_COMMITTED)
		flags |= MINIDB_V_XMIN_COMMITTED;
	if (h->xinfo & MINIDB_R3X_INVALID)
		flags |= MINIDB_V_XMIN_ABORTED;
	vm->vh.vh_cid = 0;
	if (h->n > 0)
	{
		const MinidbVersionHeader *head =
			(const MinidbVersionHeader *) (rec + h->start0);

		vm->vh.vh_cid = head->vh_cid;
		flags |= head->vh_flags & MINIDB_V_COMBOCID;
	}
	vm->raw_xmax = h->xmax;
	vm->vh.vh_xmin = h->xmax;
	if (h->xinfo & MINIDB_R3X_XMAX_MULTI)
	{
		flags |= MINIDB_V_XMIN_MULTI;
		if (minidb_multi_updater_hook)
		{
			vm->vh.vh_xmin = minidb_multi_updater_hook(h->xmax, rec);
			if (!TransactionIdIsValid(vm->vh.vh_xmin))
			{
				/* no updater left to ask about: it cannot have committed */
				vm->vh.vh_xmin = h->xmax;
				flags = (flags & ~MINIDB_V_XMIN_COMMITTED) | MINIDB_V_XMIN_ABORTED;
			}
		}
	}
	vm->vh.vh_flags = flags;
	vm->vh.vh_natts = 0;
	vm->rec = rec;
	ref->index = 0;
	ref->offset = 0;
	ref->vh = &vm->vh;
	ref->end = 0;
	ref->dataoff = 0;
	ref->datalen = 0;
	ref->bitmapoff = 0;
	ref->reclen = h->reclen;
}

static void
fill_ref(char *rec, const V3Header *h, int i, const V3Version *v,
		 MinidbVersionRef *ref)
{
	ref->index = walker_index(h, i);
	ref->offset = v->start;
	ref->vh = (MinidbVersionHeader *) (rec + v->start);
	ref->end = v->end;
	ref->dataoff = v->dataoff;
	ref->datalen = v->datalen;
	ref->bitmapoff = v->bitmapoff;
	ref->reclen = h->reclen;
}

void
v3_get_lockers(const char *rec, MinidbLockers *lk)
{
	uint8		info = (uint8) rec[0];
	uint8		xinfo = (uint8) rec[1];

	lk->xid = InvalidTransactionId;
	lk->mode = MINIDB_LOCK_NONE;
	lk->multi = false;
	lk->with_updater = false;
	if (!(info & MINIDB_R3_XMAX))
		return;
	if (!(xinfo & MINIDB_R3X_LOCK_ONLY) && !(xinfo & MINIDB_R3X_XMAX_MULTI))
		return;					/* a single updater, no lockers */
	memcpy(&lk->xid, rec + MINIDB_R3_INFO_PREFIX, R3_XMAX_SIZE);
	lk->multi = (xinfo & MINIDB_R3X_XMAX_MULTI) != 0;
	lk->with_updater = !(xinfo & MINIDB_R3X_LOCK_ONLY);
	lk->mode = lk->multi ? MINIDB_LOCK_KEYSHARE :
		(uint16) ((info >> MINIDB_R3_MODE_SHIFT) + 1);
}

bool
v3_get_single_ender(const char *rec, TransactionId *xid, bool *keys_updated)
{
	uint8		info = (uint8) rec[0];
	uint8		xinfo = (uint8) rec[1];

	if (!(info & MINIDB_R3_XMAX) ||
		(xinfo & (MINIDB_R3X_LOCK_ONLY | MINIDB_R3X_XMAX_MULTI)))
		return false;
	memcpy(xid, rec + MINIDB_R3_INFO_PREFIX, R3_XMAX_SIZE);
	*keys_updated = (xinfo & MINIDB_R3X_KEYS_UPDATED) != 0;
	return true;
}

bool
v3_get_successor(const char *rec, ItemPointer succ, bool *moved_part)
{
	uint8		info = (uint8) rec[0];
	uint8		xinfo = (uint8) rec[1];
	bool		end = (info & MINIDB_R3_XMAX) && !(xinfo & MINIDB_R3X_LOCK_ONLY);

	*moved_part = end && (xinfo & MINIDB_R3X_MOVED_PART);
	ItemPointerSetInvalid(succ);
	if (!end || !(xinfo & MINIDB_R3X_MOVED) || *moved_part ||
		!(info & MINIDB_R3_SUCC))
		return false;
	memcpy(succ, rec + succ_offset(info), R3_SUCC_SIZE);
	return true;
}

uint32
v3_spec_token(const char *rec)
{
	ItemPointerData tok;

	if (!((uint8) rec[1] & MINIDB_R3X_SPEC))
		return 0;
	memcpy(&tok, rec + succ_offset((uint8) rec[0]), R3_SUCC_SIZE);
	return ItemPointerGetBlockNumberNoCheck(&tok);
}

int
v3_nversions(const char *rec, uint32 reclen)
{
	MinidbChainError err;
	V3Header	h;

	if (!read_header(rec, reclen, &h, &err))
		return 0;
	return h.n + (h.has_end ? 1 : 0);
}

/*
 * What the xmax and successor fields would still add to the record: the
 * head's data moves from MAXALIGN(start0 + header + bitmap) to where it
 * lies behind the longest header, and every later version moves with it
 * (by a multiple of MAXIMUM_ALIGNOF).  Reads the info byte, and the head's
 * header when the move is not a multiple of MAXIMUM_ALIGNOF itself (a
 * record with one of the two fields); a record too short to hold them asks
 * for the most.
 */
uint32
v3_reserve(const char *rec, uint32 reclen)
{
	uint8		info = (uint8) rec[0];
	uint32		start0 = TYPEALIGN(R3_VERSION_ALIGN, prefix_len(info));
	uint32		longest = TYPEALIGN(R3_VERSION_ALIGN, MINIDB_R3_INFO_PREFIX +
									R3_XMAX_SIZE + R3_SUCC_SIZE);
	MinidbVersionHeader head;
	uint32		bitmaplen;

	if ((info & MINIDB_R3_XMAX) && (info & MINIDB_R3_SUCC))
		return 0;
	if (reclen < start0 + MINIDB_VERSION_HDRSZ)
		return (reclen == prefix_len(info)) ? 0 : MINIDB_SLOT_RESERVE;
	/* a move by whole MAXALIGN steps is the same whatever the bitmap */
	if ((longest - start0) % MAXIMUM_ALIGNOF == 0)
		return longest - start0;
	memcpy(&head, rec + start0, sizeof(head));
	bitmaplen = minidb_version_bitmaplen(head.vh_flags, head.vh_natts);
	return MAXALIGN(longest + MINIDB_VERSION_HDRSZ + bitmaplen) -
		MAXALIGN(start0 + MINIDB_VERSION_HDRSZ + bitmaplen);
}

void
v3_set_end_hint(char *rec, uint16 hint)
{
	if (hint & MINIDB_V_XMIN_COMMITTED)
		rec[1] |= MINIDB_R3X_COMMITTED;
	if (hint & MINIDB_V_XMIN_ABORTED)
		rec[1] |= MINIDB_R3X_INVALID;
}

void
v3_set_end_xid(char *rec, uint32 reclen, TransactionId xid)
{
	V3Header	h;
	MinidbChainError err;

	if (!check_header(rec, reclen, &h, &err) || !h.has_end ||
		!TransactionIdIsValid(xid))
		elog(ERROR, "minidb_record_set_end_xid: no end to change");
	memcpy(rec + MINIDB_R3_INFO_PREFIX, &xid, R3_XMAX_SIZE);
	rec[1] &= ~(MINIDB_R3X_XMAX_MULTI | MINIDB_R3X_COMMITTED | MINIDB_R3X_INVALID);
}

void
v3_clear_spec(char *rec, uint32 reclen)
{
	ItemPointerData none;

	if (!((uint8) rec[1] & MINIDB_R3X_SPEC))
		return;
	ItemPointerSetInvalid(&none);
	memcpy(rec + succ_offset((uint8) rec[0]), &none, R3_SUCC_SIZE);
	rec[1] &= ~MINIDB_R3X_SPEC;
}

void
v3_patch_successor(char *rec, uint32 reclen, const ItemPointerData *succ)
{
	if (!((uint8) rec[0] & MINIDB_R3_SUCC))
		elog(ERROR, "minidb record has no successor field to set");
	memcpy(rec + succ_offset((uint8) rec[0]), succ, R3_SUCC_SIZE);
}

uint32
v3_forget_successor(char *rec, uint32 reclen)
{
	uint8		xinfo = (uint8) rec[1];

	if (!(xinfo & MINIDB_R3X_MOVED))
		return reclen;
	rec[1] = xinfo & ~(R3_XINFO_END_BITS);
	if ((uint8) rec[0] & MINIDB_R3_SUCC)
	{
		ItemPointerData none;

		ItemPointerSetInvalid(&none);
		memcpy(rec + succ_offset((uint8) rec[0]), &none, R3_SUCC_SIZE);
	}
	return reclen;
}


/* ----------------------------------------------------------------
 *		The walkers
 * ----------------------------------------------------------------
 */

bool
v3_iter_init(MinidbChainIter *it, MinidbChainError *err)
{
	V3Header	h;

	if (!read_header(it->rec, it->reclen, &h, err))
		return false;
	it->start0 = h.start0;
	it->trailer = h.trailer;
	it->ndata = h.n;
	it->has_end = h.has_end;
	it->nversions = h.n + (h.has_end ? 1 : 0);
	it->offset = 0;
	it->prevlen = R3_PREVLEN_UNKNOWN;
	return true;
}

/* The header again, from what v3_iter_init found (it checked it) */
static void
iter_header(const MinidbChainIter *it, V3Header *h)
{
	h->info = (uint8) it->rec[0];
	h->xinfo = (uint8) it->rec[1];
	h->xmax = InvalidTransactionId;
	if (h->info & MINIDB_R3_XMAX)
		memcpy(&h->xmax, it->rec + MINIDB_R3_INFO_PREFIX, R3_XMAX_SIZE);
	ItemPointerSetInvalid(&h->succ);
	h->start0 = it->start0;
	h->trailer = it->trailer;
	h->n = it->ndata;
	h->has_end = it->has_end;
	h->reclen = it->reclen;
}

bool
v3_iter_next(MinidbChainIter *it, MinidbVersionRef *ref,
			 MinidbChainError *err, bool *damaged)
{
	V3Header	h;
	V3Version	v;
	int			i;
	uint32		start;
	uint32		end;

	*damaged = false;
	if (it->nversions < 0)
	{
		*damaged = true;
		return false;
	}
	if (it->index >= it->nversions)
		return false;
	iter_header(it, &h);
	if (h.has_end && it->index == 0)
	{
		/* the marker's cid lives in version 0: check it first */
		if (h.n > 0 &&
			!read_version(it->rec, &h, 0, h.start0, version_end(it->rec, &h, 0),
						  R3_PREVLEN_UNKNOWN, &v, err))
		{
			*damaged = true;
			it->nversions = -1;
			return false;
		}
		synth_marker(it->rec, &h, ref);
		it->index++;
		return true;
	}
	i = it->index - (h.has_end ? 1 : 0);
	start = next_start(&h, i, it->offset);
	end = version_end(it->rec, &h, i);
	if (!read_version(it->rec, &h, i, start, end, it->prevlen, &v, err))
	{
		*damaged = true;
		it->nversions = -1;
		return false;
	}
	fill_ref(it->rec, &h, i, &v, ref);
	it->offset = end;
	it->prevlen = v.datalen;
	it->index++;
	return true;
}

/*
 * The fast walker: the header, then the versions the predicate is asked
 * about, each checked in full with the bound of its prefix and suffix;
 * after a hit before the last version, the last one alone.
 */
int
v3_find_visible(char *rec, uint32 reclen, MinidbVisibleFn visible, void *arg,
				MinidbVersionRef *ref, MinidbChainError *err)
{
	MinidbVersionRef local;
	MinidbVersionRef *r = ref ? ref : &local;
	V3Header	h;
	V3Version	v;
	uint32		end = 0;
	uint32		prevlen = R3_PREVLEN_UNKNOWN;

	if (!read_header(rec, reclen, &h, err))
		return -2;
	if (h.has_end)
	{
		if (h.n > 0 &&
			!read_version(rec, &h, 0, h.start0, version_end(rec, &h, 0),
						  R3_PREVLEN_UNKNOWN, &v, err))
			return -2;
		synth_marker(rec, &h, r);
		if (visible(r->vh, 0, arg))
		{
#if defined(MINIDB_PLANT_EARLY_EXIT) || defined(MINIDB_PLANT_EARLY_EXIT_V3)
			return 0;
#endif
			if (!check_last(rec, &h, err))
				return -2;
			return 0;
		}
	}
	for (int i = 0; i < h.n; i++)
	{
		uint32		start = next_start(&h, i, end);

		end = version_end(rec, &h, i);
		if (!read_version(rec, &h, i, start, end, prevlen, &v, err))
			return -2;
		fill_ref(rec, &h, i, &v, r);
		if (visible(r->vh, r->index, arg))
		{
#if defined(MINIDB_PLANT_EARLY_EXIT) || defined(MINIDB_PLANT_EARLY_EXIT_V3)
			return r->index;
#endif
			if (i < h.n - 1 && !check_last(rec, &h, err))
				return -2;
			return r->index;
		}
		prevlen = v.datalen;
	}
	return -1;
}


/*
 * Data version i (1 <= i < n) reached through the trailer alone, for the
 * search below: where it starts no earlier than i minimal versions allow,
 * checked without the bound of its prefix and suffix (its newer neighbour
 * was not visited).  False when anything is off: the search then leaves
 * the version to the walk, which reports the damage as it always did.
 */
static pg_attribute_always_inline bool
probe_v3(const char *rec, const V3Header *h, int i, V3Version *v)
{
	uint32		start = TYPEALIGN(R3_VERSION_ALIGN, version_end(rec, h, i - 1));

	if (start < h->start0 + (uint32) i * MINIDB_VERSION_HDRSZ)
		return false;
	/* no error text wanted: the walk reports the damage */
	return read_version(rec, h, i, start, version_end(rec, h, i),
						R3_PREVLEN_UNKNOWN, v, NULL);
}

/* How the search learnt that version lo-1 is not visible */
typedef enum V3Above
{
	ABOVE_WALKED,				/* lo == 1: version 0, asked by visible() */
	ABOVE_SETTLED,				/* a probe settled() said no to */
	ABOVE_VISIBLE				/* a probe visible() said no to, last */
} V3Above;

/*
 * The rest of v3_find_visible_ordered, past data version 0 (v0, which the
 * caller visited and which its snapshot does not see): with search, a
 * search over data versions 1..n-1 (MINIDB_NEXT_PROBE) that asks settled()
 * about settled probes; the walk from where it stopped unless it
 * converged (or without search, from version 1).  Out of line: most reads
 * stop at version 0.
 *
 * A probe just above version hi (which is visible, or hi == n) settles
 * the search whatever the answer: if it is not seen, lo reaches hi.  Such
 * a probe is asked of visible() instead of settled() (the same answer for
 * a settled version), so that when it is not seen it is the question the
 * walk would have asked last, and it is not asked twice.
 */
static pg_attribute_always_inline int
search_v3(char *rec, const V3Header *h, const V3Version *v0,
		  MinidbVisibleFn visible, MinidbVisibleFn settled, void *arg,
		  MinidbVersionRef *r, MinidbChainError *err, bool search)
{
	V3Version	slots[3];
	V3Version  *pv = &slots[0];	/* the probe being made */
	V3Version  *lv = &slots[1];	/* version lo-1, when a probe */
	V3Version  *hv = &slots[2];	/* version hi, when a probe */
	V3Version	wv;				/* the walk's current version */
	const V3Version *v;			/* the hit */
	V3Above		above = ABOVE_WALKED;
	bool		skipped;		/* versions above the hit were not walked */
	int			lo = 1;
	int			hi = h->n;
	int			d = 1;			/* galloping: the next probe is n - d */
	int			hit;
	uint32		end = 0;
	uint32		prevlen = R3_PREVLEN_UNKNOWN;

	while (search && lo < hi)
	{
		int			mid = MINIDB_NEXT_PROBE(lo, hi, h->n, d);
		MinidbVersionHeader *pvh;
		V3Version  *t = pv;
		bool		neighbour = (mid == hi - 1);

		if (!probe_v3(rec, h, mid, pv) ||
			!MINIDB_VERSION_SETTLED(pv->vh->vh_flags))
			break;
		pvh = (MinidbVersionHeader *) pv->vh;
		if ((neighbour ? visible : settled) (pvh, walker_index(h, mid), arg))
		{
			hi = mid;
			pv = hv;			/* the probe becomes version hi */
			hv = t;
			d *= 2;
		}
		else
		{
			lo = mid + 1;
			pv = lv;			/* the probe becomes version lo-1 */
			lv = t;
			d = 0;				/* bracketed: bisect */
			above = neighbour ? ABOVE_VISIBLE : ABOVE_SETTLED;
		}
	}
	skipped = above != ABOVE_WALKED;
	if (above == ABOVE_SETTLED)
	{
		/* the version above lo, asked as the walk would ask it last */
		fill_ref(rec, h, lo - 1, lv, r);
		if (visible(r->vh, r->index, arg))
		{
			/* settled() said no: keep to what visible() says */
			hit = lo - 1;
			v = lv;
			goto hit;
		}
	}
	if (search && lo == hi && hi < h->n)
	{
		/* converged on a probe the snapshot sees: the hit */
		hit = hi;
		v = hv;
		skipped = true;			/* unchecked against its newer neighbour */
		fill_ref(rec, h, hit, v, r);
		goto hit;
	}
	if (above == ABOVE_WALKED)
	{
		end = v0->end;
		prevlen = v0->datalen;
	}
	else
	{
		end = lv->end;
		prevlen = lv->datalen;
	}
	for (int i = lo; i < h->n; i++)
	{
		uint32		start = next_start(h, i, end);

		end = version_end(rec, h, i);
		if (!read_version(rec, h, i, start, end, prevlen, &wv, err))
			return -2;
		fill_ref(rec, h, i, &wv, r);
		if (visible(r->vh, r->index, arg))
		{
			hit = i;
			v = &wv;
			goto hit;
		}
		prevlen = wv.datalen;
	}
	return -1;

hit:
	if (v->delta && skipped)
	{
		/*
		 * Rebuilt from the versions above: check them as the walk would,
		 * each with the bound of its prefix and suffix, in one loop.
		 */
		uint32		e = 0;
		uint32		plen = R3_PREVLEN_UNKNOWN;
		V3Version	cv;

		for (int j = 0; j <= hit; j++)
		{
			uint32		start = next_start(h, j, e);

			e = version_end(rec, h, j);
			if (!read_version(rec, h, j, start, e, plen, &cv, err))
				return -2;
			plen = cv.datalen;
		}
	}
	if (hit < h->n - 1 && !check_last(rec, h, err))
		return -2;
	return r->index;
}

/*
 * The fast walker with the search (minidb_chain_find_visible_ordered):
 * the row's end and data version 0 as v3_find_visible visits them; then,
 * when more than MINIDB_SEARCH_MIN data versions are left, the search
 * (search_v3).  Invariant: every data version above lo is invisible,
 * version hi (n: none) is visible.  A probe that is not settled, or not
 * plainly sound, ends the search, and the walk goes on from lo.  A hit
 * stored as a difference is rebuilt from the versions above it, so they
 * are all checked first, as the walk would have checked them.
 */
int
v3_find_visible_ordered(char *rec, uint32 reclen, MinidbVisibleFn visible,
						MinidbVisibleFn settled, void *arg,
						MinidbVersionRef *ref, MinidbChainError *err)
{
	MinidbVersionRef local;
	MinidbVersionRef *r = ref ? ref : &local;
	V3Header	h;
	V3Version	v;
	uint32		end;

	if (!read_header(rec, reclen, &h, err))
		return -2;
	if (h.has_end)
	{
		if (h.n > 0 &&
			!read_version(rec, &h, 0, h.start0, version_end(rec, &h, 0),
						  R3_PREVLEN_UNKNOWN, &v, err))
			return -2;
		synth_marker(rec, &h, r);
		if (visible(r->vh, 0, arg))
		{
			if (!check_last(rec, &h, err))
				return -2;
			return 0;
		}
	}
	if (h.n == 0)
		return -1;
	end = version_end(rec, &h, 0);
	if (!read_version(rec, &h, 0, h.start0, end, R3_PREVLEN_UNKNOWN, &v,
					  err))
		return -2;
	fill_ref(rec, &h, 0, &v, r);
	if (visible(r->vh, r->index, arg))
	{
		if (h.n > 1 && !check_last(rec, &h, err))
			return -2;
		return r->index;
	}
	return search_v3(rec, &h, &v, visible, settled, arg, r, err,
					 h.n - 1 > MINIDB_SEARCH_MIN);
}


/* ----------------------------------------------------------------
 *		The newest reader's shortcut for a record of many versions
 * ----------------------------------------------------------------
 */

/* The newest readers' answer: version 0, stored whole, as *out */
static void
newest_whole_out(const char *rec, const V3Version *v0, MinidbVersionData *out)
{
	out->xmin = v0->vh->vh_xmin;
	out->cid = v0->vh->vh_cid;
	out->flags = v0->vh->vh_flags;
	out->natts = v0->vh->vh_natts;
	out->bitmap = (out->flags & MINIDB_V_HASNULL) ?
		(const bits8 *) (rec + v0->bitmapoff) : NULL;
	out->data = rec + v0->dataoff;
	out->datalen = v0->datalen;
}

/*
 * minidb_v3_newest_plain (see chain.h): a record without an xmax or
 * successor field (header_plain: no end, no lockers, no token; with or
 * without a trailer), whose version 0 is stored whole and not hinted
 * aborted.  It checks what v3_find_visible checks when its predicate
 * accepts data version 0: the header, version 0 (in full; it has no newer
 * neighbour to bound it), and, with two versions or more, the last
 * version alone through the trailer (check_last: the tail check).  The
 * same shortcuts the walker takes first (header_plain, version_plain);
 * where they say "not sure", so does this: the caller takes the walker.
 * With older, version 1's header too, read off the same parse.
 */
bool
minidb_v3_newest_plain(const char *rec, uint32 reclen, MinidbVersionData *out,
					   MinidbVersionHeader *older)
{
	V3Header	h;
	V3Version	v0;
	uint16		flags;
	bool		ok;

#ifndef MINIDB_PLANT_NEWEST_NO_HEADER
	if (!header_plain(rec, reclen, &h))
		return false;
#else
	/* planted bug (tests only): the header parsed, not checked */
	if (reclen < 4 || ((uint8) rec[0] & MINIDB_R3_FORMAT_MASK) != MINIDB_FORMAT_V3)
		return false;
	h.reclen = reclen;
	h.info = (uint8) rec[0];
	h.xinfo = (uint8) rec[1];
	h.xmax = InvalidTransactionId;
	ItemPointerSetInvalid(&h.succ);
	h.has_end = false;
	h.start0 = TYPEALIGN(R3_VERSION_ALIGN, prefix_len(h.info));
	if (h.info & MINIDB_R3_MULTI)
	{
		h.n = minidb_read_u16(rec + reclen - sizeof(uint16));
		if (h.n < 2 || (uint32) (h.n + 1) * sizeof(uint16) > reclen)
			return false;
		h.trailer = reclen - (h.n + 1) * sizeof(uint16);
	}
	else
	{
		h.n = 1;
		h.trailer = reclen;
	}
#endif
	if (!version_plain(rec, &h, 0, h.start0, version_end(rec, &h, 0),
					   R3_PREVLEN_UNKNOWN, &v0))
		return false;
	flags = v0.vh->vh_flags;
	/* whole (version_plain refuses a difference at 0), not hinted aborted */
	ok = !v0.delta && !(flags & MINIDB_V_XMIN_ABORTED);
#ifndef MINIDB_PLANT_NEWEST_NO_TAIL
	if (ok && h.n >= 2)
	{
		/* the tail check: check_last, through version_plain */
		int			last = h.n - 1;
		uint32		start = TYPEALIGN(R3_VERSION_ALIGN,
									  version_end(rec, &h, last - 1));
		V3Version	lv;

		ok = start >= h.start0 + (uint32) last * MINIDB_VERSION_HDRSZ &&
			version_plain(rec, &h, last, start, version_end(rec, &h, last),
						  R3_PREVLEN_UNKNOWN, &lv);
	}
#endif
	if (!ok)
		return false;
#if defined(MINIDB_CHECK_FAST_PATH) && \
	!defined(MINIDB_PLANT_NEWEST_NO_HEADER) && !defined(MINIDB_PLANT_NEWEST_NO_TAIL)
	{
		/* the detailed checks the walker would make must all pass */
		V3Header	d;
		V3Version	dv;
		MinidbChainError err;

		if (!check_header(rec, reclen, &d, &err) ||
			!check_version(rec, &d, 0, d.start0, version_end(rec, &d, 0),
						   R3_PREVLEN_UNKNOWN, &dv, &err) ||
			!check_last(rec, &d, &err))
			elog(ERROR, "minidb_v3_newest_plain accepted a V3 record the walker's checks refuse: version %d, field \"%s\": %s",
				 err.version, err.field, err.detail);
		if (d.has_end || d.n != h.n || dv.start != v0.start ||
			dv.dataoff != v0.dataoff || dv.datalen != v0.datalen ||
			dv.delta)
			elog(ERROR, "minidb_v3_newest_plain and the walker's checks disagree");
	}
#endif
	if (older != NULL)
	{
		/* version 1's header, from the header parsed above */
		uint32		start = TYPEALIGN(R3_VERSION_ALIGN,
									  version_end(rec, &h, 0));

		if (h.n < 2 || start < h.start0 + MINIDB_VERSION_HDRSZ ||
			start + MINIDB_VERSION_HDRSZ > h.trailer)
			return false;
		memcpy(older, rec + start, sizeof(MinidbVersionHeader));
	}
	newest_whole_out(rec, &v0, out);
	return true;
}

/*
 * minidb_v3_newest_locked (see chain.h): a record whose only optional
 * field is a lock-only xmax, version 0 stored whole and not hinted
 * aborted.  Deliberately not the inline copy's code: the walker's own
 * detailed checks of the read that stops at version 0 (check_header,
 * check_version of version 0, check_last), and the lockers as
 * v3_get_lockers reads them, so that the scan (under
 * -DMINIDB_CHECK_FAST_PATH), the unit tests and the fuzzer compare the
 * inline shortcut with what the walker and the tuple's lockers would be.
 */
bool
minidb_v3_newest_locked(const char *rec, uint32 reclen, MinidbVersionData *out,
						MinidbVersionHeader *older, MinidbLockers *lk)
{
	V3Header	h;
	V3Version	v0;
	uint16		flags;

	/* the shape: an xmax field that only locks, no successor field */
	if (reclen < MINIDB_R3_INFO_PREFIX ||
		((uint8) rec[0] & (MINIDB_R3_FORMAT_MASK | MINIDB_R3_XMAX |
						   MINIDB_R3_SUCC)) !=
		(MINIDB_FORMAT_V3 | MINIDB_R3_XMAX) ||
		!((uint8) rec[1] & MINIDB_R3X_LOCK_ONLY))
		return false;
	/* what v3_find_visible checks when its predicate takes version 0 */
	if (!check_header(rec, reclen, &h, NULL) || h.has_end || h.n < 1 ||
		!check_version(rec, &h, 0, h.start0, version_end(rec, &h, 0),
					   R3_PREVLEN_UNKNOWN, &v0, NULL) ||
		!check_last(rec, &h, NULL))
		return false;
	flags = v0.vh->vh_flags;
	if (v0.delta || (flags & MINIDB_V_XMIN_ABORTED))
		return false;
	memset(older, 0, sizeof(MinidbVersionHeader));
	if (h.n >= 2)
	{
		/* version 1's header, between version 0 and the trailer */
		uint32		start = TYPEALIGN(R3_VERSION_ALIGN,
									  version_end(rec, &h, 0));

		if (start + MINIDB_VERSION_HDRSZ > h.trailer)
			return false;
		memcpy(older, rec + start, sizeof(MinidbVersionHeader));
	}
	v3_get_lockers(rec, lk);
	newest_whole_out(rec, &v0, out);
	return true;
}

/* ----------------------------------------------------------------
 *		Rebuilding a version from its differences
 * ----------------------------------------------------------------
 */

/* Make buf hold at least size bytes (MAXALIGNed, palloc'd) */
static char *
delta_buf_reserve(MinidbDeltaBuf *buf, uint32 size)
{
	size = Max(size, 1);
	if (buf->data == NULL)
	{
		buf->data = palloc(size);
		buf->size = size;
	}
	else if (buf->size < size)
	{
		buf->data = repalloc(buf->data, size);
		buf->size = size;
	}
	return buf->data;
}

/*
 * Data version k's bytes into dst (room for the largest data length of
 * versions 0..k): from the nearest whole version at or above it, each
 * difference applied in turn.  vs are the parsed versions 0..k.
 */
static void
apply_deltas(const char *rec, const V3Version *vs, int k, char *dst,
			 const char **data, uint32 *datalen)
{
	int			from = k;
	const char *cur;
	uint32		curlen;
	bool		copied = false;

	while (from > 0 && vs[from].delta)
		from--;
	cur = rec + vs[from].dataoff;
	curlen = vs[from].datalen;
	for (int j = from + 1; j <= k; j++)
	{
		const V3Version *v = &vs[j];
		const char *mid = rec + v->midoff;

		if (v->prefix + v->suffix > curlen)
			elog(ERROR, "minidb record changed under a reader: a difference does not fit its newer version");
		if (!copied)
		{
			memcpy(dst, cur, v->prefix);
			memcpy(dst + v->prefix, mid, v->midlen);
			memcpy(dst + v->prefix + v->midlen, cur + curlen - v->suffix,
				   v->suffix);
			copied = true;
		}
		else
		{
			memmove(dst + v->prefix + v->midlen, dst + curlen - v->suffix,
					v->suffix);
			memcpy(dst + v->prefix, mid, v->midlen);
		}
		cur = dst;
		curlen = v->datalen;
	}
	*data = cur;
	*datalen = curlen;
}

/*
 * Data version k of a record, rebuilt into buf (NULL: a fresh palloc'd
 * buffer), in one pass down from version 0: each version checked as the
 * walk checks it (with the bound of its prefix and suffix), a whole one
 * taken as it stands in the record, a difference applied to the version
 * above it (copied out of the record the first time, then in place).  So
 * no array of the versions and no allocation once buf is large enough.
 * A whole version below the first difference makes the work done above it
 * moot; it is still done, as the checks must be.
 */
void
v3_rebuild(const char *rec, const MinidbVersionRef *ref,
		   MinidbVersionData *out, MinidbDeltaBuf *buf)
{
	V3Header	h;
	MinidbChainError err;
	V3Version	v;
	MinidbDeltaBuf local = {NULL, 0};
	MinidbDeltaBuf *db = buf ? buf : &local;
	uint32		end = 0;
	uint32		prevlen = R3_PREVLEN_UNKNOWN;
	const char *cur = NULL;		/* version i-1's data */
	uint32		curlen = 0;
	bool		in_dst = false; /* cur is db->data */
	int			k;

	if (!read_header(rec, ref->reclen, &h, &err))
		elog(ERROR, "minidb record changed under a reader: field \"%s\": %s",
			 err.field, err.detail);
	k = ref->index - (h.has_end ? 1 : 0);
	if (k <= 0 || k >= h.n)
		elog(ERROR, "minidb_version_rebuild: version %d is not a difference",
			 ref->index);
	for (int i = 0; i <= k; i++)
	{
		uint32		start = next_start(&h, i, end);
		char	   *dst;

		end = version_end(rec, &h, i);
		if (!read_version(rec, &h, i, start, end, prevlen, &v, &err))
			elog(ERROR, "minidb record changed under a reader: version %d, field \"%s\": %s",
				 err.version, err.field, err.detail);
		prevlen = v.datalen;
		if (!v.delta)
		{
			cur = rec + v.dataoff;
			curlen = v.datalen;
			in_dst = false;
			continue;
		}
		/* version 0 is never a difference: cur is version i-1 */
		if (v.prefix + v.suffix > curlen)
			elog(ERROR, "minidb record changed under a reader: a difference does not fit its newer version");
		if (!in_dst)
		{
			dst = delta_buf_reserve(db, v.datalen);
			memcpy(dst, cur, v.prefix);
			memcpy(dst + v.prefix, rec + v.midoff, v.midlen);
			memcpy(dst + v.prefix + v.midlen, cur + curlen - v.suffix,
				   v.suffix);
			in_dst = true;
		}
		else
		{
			/* room for version i-1 (there now) and version i */
			dst = delta_buf_reserve(db, Max(curlen, v.datalen));
			memmove(dst + v.prefix + v.midlen, dst + curlen - v.suffix,
					v.suffix);
			memcpy(dst + v.prefix, rec + v.midoff, v.midlen);
		}
		cur = dst;
		curlen = v.datalen;
	}
	if (!v.delta)
		elog(ERROR, "minidb_version_rebuild: version %d is not a difference",
			 ref->index);
	out->data = cur;
	out->datalen = curlen;
}


/* ----------------------------------------------------------------
 *		Writing records
 * ----------------------------------------------------------------
 */

/*
 * Writes a record front to back; with out NULL it only counts, so that
 * sizing and building share every decision.
 */
typedef struct V3Writer
{
	char	   *out;
	uint32		outsize;
	uint64		pos;
	int			n;				/* versions written */
	int			nmax;			/* versions announced */
	uint16	   *ends;
	uint16		ends_local[32];
} V3Writer;

/* Out of line, so that w_put is small enough to inline (a caller's bug) */
static pg_noinline void
w_overflow(const V3Writer *w)
{
	elog(ERROR, "minidb record builder: output buffer of %u bytes is too small",
		 w->outsize);
}

/*
 * Every field of a record goes through here, a few bytes at a time, and
 * sizing passes only count: inlined, the count is an addition and a copy
 * of a known length is a move.
 */
static inline void
w_put(V3Writer *w, const void *src, uint32 len)
{
	if (w->out)
	{
		if (unlikely(w->pos + len > w->outsize))
			w_overflow(w);
		if (src)
			memcpy(w->out + w->pos, src, len);
		else
			memset(w->out + w->pos, 0, len);
	}
	w->pos += len;
}

static inline void
w_align(V3Writer *w, uint32 align)
{
	w_put(w, NULL, (uint32) (TYPEALIGN(align, w->pos) - w->pos));
}

static void
w_begin(V3Writer *w, char *out, uint32 outsize, int nversions, uint8 info,
		uint8 xinfo, TransactionId xmax, const ItemPointerData *succ)
{
	w->out = out;
	w->outsize = outsize;
	w->pos = 0;
	w->n = 0;
	w->nmax = nversions;
	w->ends = w->ends_local;
	if (out && nversions > lengthof(w->ends_local))
		w->ends = palloc(sizeof(uint16) * nversions);
	info = (info & ~(MINIDB_R3_FORMAT_MASK | MINIDB_R3_MULTI)) |
		MINIDB_FORMAT_V3 | (nversions > 1 ? MINIDB_R3_MULTI : 0);
	w_put(w, &info, 1);
	w_put(w, &xinfo, 1);
	if (info & MINIDB_R3_XMAX)
		w_put(w, &xmax, R3_XMAX_SIZE);
	if (info & MINIDB_R3_SUCC)
		w_put(w, succ, R3_SUCC_SIZE);
}

static void
w_version_begin(V3Writer *w, const MinidbVersionHeader *core, uint16 enc,
				const bits8 *bitmap)
{
	MinidbVersionHeader vh = *core;

	if (w->n >= w->nmax)
		elog(ERROR, "minidb record builder: more versions than announced");
	vh.vh_flags = (vh.vh_flags & MINIDB_V3_FLAGS_MASK & ~MINIDB_V_ENC_MASK) | enc;
	w_align(w, R3_VERSION_ALIGN);
	w_put(w, &vh, MINIDB_VERSION_HDRSZ);
	if (vh.vh_flags & MINIDB_V_HASNULL)
		w_put(w, bitmap, MINIDB_BITMAPLEN(vh.vh_natts));
}

static void
w_version_end(V3Writer *w)
{
	if (w->out && w->pos <= MINIDB_R3_MAX_LEN)
		w->ends[w->n] = (uint16) w->pos;
	w->n++;
}

static void
w_full(V3Writer *w, const MinidbVersionHeader *core, const bits8 *bitmap,
	   const char *data, uint32 datalen)
{
	w_version_begin(w, core, MINIDB_V_ENC_FULL, bitmap);
	w_align(w, MAXIMUM_ALIGNOF);
	if (datalen > 0)
		w_put(w, data, datalen);
	w_version_end(w);
}

static void
w_delta(V3Writer *w, const MinidbVersionHeader *core, const bits8 *bitmap,
		uint32 prefix, uint32 suffix, const char *mid, uint32 midlen)
{
	uint16		affix[2];

	affix[0] = (uint16) prefix;
	affix[1] = (uint16) suffix;
	w_version_begin(w, core, MINIDB_V_ENC_DELTA, bitmap);
	w_align(w, sizeof(uint16));
	w_put(w, affix, sizeof(affix));
	if (midlen > 0)
		w_put(w, mid, midlen);
	w_version_end(w);
}

/* The trailer; returns the record's length */
static uint32
w_finish(V3Writer *w)
{
	if (w->n != w->nmax)
		elog(ERROR, "minidb record builder: %d versions written, %d announced",
			 w->n, w->nmax);
	if (w->n > 1)
	{
		uint16		n = (uint16) w->n;

		w_align(w, sizeof(uint16));
		if (w->out)
			w_put(w, w->ends, sizeof(uint16) * w->n);
		else
			w->pos += sizeof(uint16) * w->n;
		w_put(w, &n, sizeof(n));
	}
	if (w->ends != w->ends_local)
		pfree(w->ends);
	if (w->pos > MINIDB_R3_MAX_LEN)
	{
		if (w->out)
			elog(ERROR, "minidb record of format %d would take " UINT64_FORMAT " bytes, more than its limit of %u",
				 MINIDB_FORMAT_V3, w->pos, (uint32) MINIDB_R3_MAX_LEN);
		/* sizing: the caller refuses it */
		return (uint32) Min(w->pos, (uint64) PG_UINT32_MAX);
	}
	return (uint32) w->pos;
}

/*
 * One version to write: whole (data/datalen), or a difference from the
 * version written before it (delta; copied as it is).  A whole version
 * with try_delta is written as its difference from the previous whole
 * version when that saves enough (delta_saves_enough).
 */
typedef struct V3Src
{
	MinidbVersionHeader core;
	const bits8 *bitmap;
	const char *data;			/* whole: the data (NULL only when sizing) */
	uint32		datalen;
	bool		delta;
	uint32		prefix;
	uint32		suffix;
	const char *mid;
	uint32		midlen;
	bool		try_delta;
} V3Src;

/* The prefix and suffix that older shares with newer */
static void
shared_affixes(const char *newer, uint32 newlen, const char *older,
			   uint32 oldlen, uint32 *prefix, uint32 *suffix)
{
	uint32		max = Min(newlen, oldlen);
	uint32		p = minidb_common_prefix(newer, older, max);
	uint32		s = minidb_common_suffix(newer + newlen, older + oldlen,
										 max - p);

	*prefix = Min(p, PG_UINT16_MAX);
	*suffix = Min(s, PG_UINT16_MAX);
}

/*
 * Whether version s, written next into w, is worth storing as its
 * difference from the version before it (prefix and suffix shared): when
 * that takes at least R3_DELTA_SAVING fewer bytes than the whole version,
 * each measured by writing it both ways from where w stands, without
 * output, up to the 4-alignment the next version or the trailer starts
 * at.  A smaller saving is not worth the rebuilding an older reader does.
 * The sizing pass and the writing pass stand at the same positions, so
 * they choose alike.
 */
static bool
delta_saves_enough(const V3Writer *w, const V3Src *s, uint32 prefix,
				   uint32 suffix)
{
	V3Writer	whole = *w;
	V3Writer	diff = *w;

	whole.out = diff.out = NULL;	/* measure only */
	w_full(&whole, &s->core, s->bitmap, s->data, s->datalen);
	w_delta(&diff, &s->core, s->bitmap, prefix, suffix, s->data + prefix,
			s->datalen - prefix - suffix);
	return TYPEALIGN(R3_VERSION_ALIGN, diff.pos) + R3_DELTA_SAVING <=
		TYPEALIGN(R3_VERSION_ALIGN, whole.pos);
}

static void
emit_versions(V3Writer *w, const V3Src *src, int n)
{
	const char *prev = NULL;
	uint32		prevlen = 0;

	for (int i = 0; i < n; i++)
	{
		const V3Src *s = &src[i];
		uint32		p = 0;
		uint32		sfx = 0;
		bool		as_delta = false;

		if (s->delta)
		{
			w_delta(w, &s->core, s->bitmap, s->prefix, s->suffix, s->mid,
					s->midlen);
			prev = NULL;
			continue;
		}
		if (s->try_delta && prev != NULL && s->data != NULL)
		{
			shared_affixes(prev, prevlen, s->data, s->datalen, &p, &sfx);
			as_delta = delta_saves_enough(w, s, p, sfx);
		}
		if (as_delta)
			w_delta(w, &s->core, s->bitmap, p, sfx, s->data + p,
					s->datalen - p - sfx);
		else
			w_full(w, &s->core, s->bitmap, s->data, s->datalen);
		prev = s->data;
		prevlen = s->datalen;
	}
}

/* A source for version v given as builders' input (whole) */
static void
src_from_data(V3Src *s, const MinidbVersionData *v, bool try_delta)
{
	if (v->flags & MINIDB_V_NODATA_MASK)
		elog(ERROR, "minidb record builder: a marker below the newest version");
	if (v->natts > MINIDB_MAX_NATTS)
		elog(ERROR, "minidb version with %u attributes exceeds the limit of %u",
			 v->natts, MINIDB_MAX_NATTS);
	if (v->datalen > MINIDB_MAX_VERSION_LEN)
		elog(ERROR, "minidb version of %u data bytes exceeds the limit of %u bytes",
			 v->datalen, (uint32) MINIDB_MAX_VERSION_LEN);
	memset(s, 0, sizeof(*s));
	s->core.vh_xmin = v->xmin;
	s->core.vh_cid = v->cid;
	s->core.vh_flags = v->flags & MINIDB_V3_FLAGS_MASK & ~MINIDB_V_ENC_MASK;
	s->core.vh_natts = v->natts;
	s->bitmap = v->bitmap;
	s->data = v->data;
	s->datalen = v->datalen;
	s->try_delta = try_delta;
}

/* A source for parsed version v of rec, copied as it is stored */
static void
src_from_parsed(V3Src *s, const char *rec, const V3Version *v)
{
	memset(s, 0, sizeof(*s));
	s->core = *v->vh;
	s->bitmap = (v->vh->vh_flags & MINIDB_V_HASNULL) ?
		(const bits8 *) (rec + v->bitmapoff) : NULL;
	if (v->delta)
	{
		s->delta = true;
		s->prefix = v->prefix;
		s->suffix = v->suffix;
		s->mid = rec + v->midoff;
		s->midlen = v->midlen;
	}
	else
	{
		s->data = rec + v->dataoff;
		s->datalen = v->datalen;
	}
}

/* info and xinfo bits, and the xmax, for a row's lockers */
static void
lockers_fields(const MinidbLockers *lk, uint8 *info, uint8 *xinfo,
			   TransactionId *xmax)
{
	*xmax = InvalidTransactionId;
	if (lk == NULL || !TransactionIdIsValid(lk->xid))
		return;
	*info |= MINIDB_R3_XMAX;
	*xinfo |= MINIDB_R3X_LOCK_ONLY;
	*xmax = lk->xid;
	if (lk->multi)
		*xinfo |= MINIDB_R3X_XMAX_MULTI;
	else
	{
		uint16		mode = Max(lk->mode, MINIDB_LOCK_KEYSHARE);

		if (mode > MINIDB_LOCK_MAX)
			elog(ERROR, "minidb record builder: unknown lock mode %u", mode);
		*info |= (uint8) ((mode - 1) << MINIDB_R3_MODE_SHIFT);
	}
}

/* The same for a row's end given as a marker version */
static void
end_fields(const MinidbVersionData *m, const MinidbRecordEnd *extra,
		   uint8 *info, uint8 *xinfo, TransactionId *xmax,
		   ItemPointerData *succ)
{
	if (!TransactionIdIsValid(m->xmin))
		elog(ERROR, "minidb record builder: a marker without a transaction");
	*info |= MINIDB_R3_XMAX;
	*xmax = m->xmin;
	if (m->flags & MINIDB_V_XMIN_MULTI)
		*xinfo |= MINIDB_R3X_XMAX_MULTI;
	if (m->flags & MINIDB_V_XMIN_COMMITTED)
		*xinfo |= MINIDB_R3X_COMMITTED;
	if (m->flags & MINIDB_V_XMIN_ABORTED)
		*xinfo |= MINIDB_R3X_INVALID;
	if (m->flags & MINIDB_V_MOVED)
	{
		*xinfo |= MINIDB_R3X_MOVED;
		if (m->flags & MINIDB_V_KEYS_UPDATED)
			*xinfo |= MINIDB_R3X_KEYS_UPDATED;
		if (extra && extra->moved_part)
			*xinfo |= MINIDB_R3X_MOVED_PART;
		else
		{
			if (extra == NULL || extra->successor == NULL)
				elog(ERROR, "minidb record builder: a moved row without its successor");
			*info |= MINIDB_R3_SUCC;
			*succ = *extra->successor;
		}
	}
}

/* The head's cid becomes the end's cmax (heap's t_cid), see chain.h */
static void
head_takes_cmax(V3Src *head, const MinidbVersionData *m)
{
	head->core.vh_cid = m->cid;
	head->core.vh_flags = (head->core.vh_flags & ~MINIDB_V_COMBOCID) |
		(m->flags & MINIDB_V_COMBOCID);
}

/*
 * A record from whole versions vs[0..n-1], newest first: vs[0] may be a
 * marker (the row's end), the others are data versions, each stored as a
 * difference from the one before when smaller.  extra gives the lockers
 * (no end) or a successor / speculative token.
 */
uint32
v3_from_versions(char *out, uint32 outsize, const MinidbVersionData *vs,
				 int n, const MinidbRecordEnd *extra, bool sizeonly)
{
	V3Writer	w;
	V3Src		local[8];
	V3Src	   *src = local;
	uint8		info = 0;
	uint8		xinfo = 0;
	TransactionId xmax = InvalidTransactionId;
	ItemPointerData succ;
	bool		end = n > 0 && (vs[0].flags & MINIDB_V_NODATA_MASK);
	int			ndata = n - (end ? 1 : 0);
	uint32		len;

	if (n < 1 || ndata < 0 || (ndata == 0 && !end))
		elog(ERROR, "minidb record builder: no version to store");
	ItemPointerSetInvalid(&succ);
	if (end)
		end_fields(&vs[0], extra, &info, &xinfo, &xmax, &succ);
	else if (extra)
	{
		lockers_fields(extra->lockers, &info, &xinfo, &xmax);
		if (extra->spec && extra->successor)
		{
			info |= MINIDB_R3_SUCC;
			xinfo |= MINIDB_R3X_SPEC;
			succ = *extra->successor;
		}
	}
	if (ndata > lengthof(local))
		src = palloc(sizeof(V3Src) * ndata);
	for (int i = 0; i < ndata; i++)
		src_from_data(&src[i], &vs[i + (end ? 1 : 0)], i > 0);
	if (end && ndata > 0)
		head_takes_cmax(&src[0], &vs[0]);

	w_begin(&w, sizeonly ? NULL : out, outsize, ndata, info, xinfo, xmax,
			&succ);
	emit_versions(&w, src, ndata);
	len = w_finish(&w);
	if (src != local)
		pfree(src);
	return len;
}

uint32
v3_build(char *out, uint32 outsize, const MinidbVersionData *v,
		 const MinidbRecordEnd *extra)
{
	if (v->flags & MINIDB_V_NODATA_MASK)
		elog(ERROR, "minidb record builder: a record cannot begin with a marker");
	return v3_from_versions(out, outsize, v, 1, extra, out == NULL);
}

/*
 * Prepend v to a V3 record: a data version becomes the new head, the old
 * head its difference, the lockers stay (unless extra->drop_lockers); a
 * marker becomes the row's end (the lockers, which the caller folded into
 * the marker's xmin when they matter, go).  The
 * row must not have ended already (the caller prunes an aborted end).
 */
uint32
v3_prepend(char *out, uint32 outsize, const char *rec, uint32 reclen,
		   const MinidbVersionData *v, const MinidbRecordEnd *extra,
		   bool sizeonly)
{
	return v3_prepend_newest(out, outsize, rec, reclen, 0, v, extra,
							 sizeonly);
}

/*
 * How many data versions keep[] (indexed as walkers index) keeps of a
 * record without an end when they are its newest ones, every older one
 * going: m for keep[0..m-1] true and the rest false.  0 for any other
 * pattern, a record with an end, or one whose header is damaged.
 */
int
v3_kept_newest(const char *rec, uint32 reclen, const bool *keep)
{
	MinidbChainError err;
	V3Header	h;
	int			m = 0;

	if (!read_header(rec, reclen, &h, &err) || h.has_end)
		return 0;
	while (m < h.n && keep[m])
		m++;
	for (int i = m; i < h.n; i++)
		if (keep[i])
			return 0;
	return m;
}

/*
 * v3_prepend onto rec's newest nnewest data versions alone (0: all of
 * them), as onto the record v3_prune leaves when it drops the older ones:
 * that record holds the versions it keeps as rec stores them (the oldest
 * kept one is stored whole or as its difference from a kept one) under
 * the same header, so the result is the same, without building it.
 */
uint32
v3_prepend_newest(char *out, uint32 outsize, const char *rec, uint32 reclen,
				  int nnewest, const MinidbVersionData *v,
				  const MinidbRecordEnd *extra, bool sizeonly)
{
	const char *orig = rec;
	V3Header	h;
	V3Version	parsed_local[8];
	V3Version  *parsed;
	V3Writer	w;
	V3Src		src_local[lengthof(parsed_local) + 1];
	V3Src	   *src = src_local;
	bool		marker = (v->flags & MINIDB_V_NODATA_MASK) != 0;
	int			nsrc;
	uint8		info;
	uint8		xinfo;
	TransactionId xmax;
	ItemPointerData succ;
	uint32		len;

	if (!sizeonly)
		rec = source_copy(out, outsize, rec, reclen);
	parsed = parse_valid(rec, reclen, &h, parsed_local,
						 lengthof(parsed_local));
	if (h.has_end && sizeonly)
	{
		/*
		 * Sizing a write the caller will make once it has pruned the row's
		 * (aborted) end: the record without it.
		 */
		V3Header	was = h;

		header_without_end(&was, &h.info, &h.xinfo, &h.xmax, &h.succ);
		h.has_end = false;
		if (h.n == 0)
			elog(ERROR, "minidb_record_prepend onto a record without versions");
	}
	if (h.has_end)
		elog(ERROR, "minidb_record_prepend onto a row that has ended");
	if (h.n == 0)
		elog(ERROR, "minidb_record_prepend onto a record without versions");
	if (nnewest > h.n)
		elog(ERROR, "minidb_record_prepend onto the newest %d of %d versions",
			 nnewest, h.n);
	if (nnewest > 0)
		h.n = nnewest;
	nsrc = h.n + (marker ? 0 : 1);
	xmax = h.xmax;
	succ = h.succ;
	if (nsrc > MINIDB_MAX_VERSIONS)
		elog(ERROR, "minidb record already holds %d versions, the limit", h.n);
	if (nsrc > lengthof(src_local))
		src = palloc(sizeof(V3Src) * nsrc);
	if (marker)
	{
		info = 0;
		xinfo = 0;
		xmax = InvalidTransactionId;
		ItemPointerSetInvalid(&succ);
		end_fields(v, extra, &info, &xinfo, &xmax, &succ);
		for (int i = 0; i < h.n; i++)
			src_from_parsed(&src[i], rec, &parsed[i]);
		head_takes_cmax(&src[0], v);
	}
	else
	{
		/* the lockers and a speculative token stay */
		info = h.info & (MINIDB_R3_XMAX | MINIDB_R3_SUCC |
						 (0x03 << MINIDB_R3_MODE_SHIFT));
		xinfo = h.xinfo;
		if (extra && extra->drop_lockers && (info & MINIDB_R3_XMAX))
		{
			/* ... unless they all ended: then only the token stays */
			if (!(xinfo & MINIDB_R3X_LOCK_ONLY))
				elog(ERROR, "minidb_record_prepend: the xmax to drop is not lock-only");
			info &= ~(MINIDB_R3_XMAX | (0x03 << MINIDB_R3_MODE_SHIFT));
			xinfo &= MINIDB_R3X_SPEC;
			xmax = InvalidTransactionId;
		}
		src_from_data(&src[0], v, false);
		for (int i = 0; i < h.n; i++)
			src_from_parsed(&src[i + 1], rec, &parsed[i]);
		src[1].try_delta = true;	/* the old head, whole: its difference */
	}
	w_begin(&w, sizeonly ? NULL : out, outsize, nsrc, info, xinfo, xmax,
			&succ);
	emit_versions(&w, src, nsrc);
	len = w_finish(&w);
	if (src != src_local)
		pfree(src);
	if (parsed != parsed_local)
		pfree(parsed);
	if (rec != orig)
		pfree((char *) rec);
	return len;
}

/*
 * Rewrite a V3 record with new header fields and the data versions that
 * keep[] (indexed as walkers index, from keep_from) keeps; a kept version
 * whose newer neighbour goes is stored whole.  Into out (NULL: sizing).
 */
static uint32
rewrite(char *out, uint32 outsize, const char *rec, const V3Header *h,
		const V3Version *parsed, const bool *keep, int keep_from,
		uint8 info, uint8 xinfo, TransactionId xmax,
		const ItemPointerData *succ)
{
	V3Writer	w;
	V3Src	   *src = palloc(sizeof(V3Src) * Max(h->n, 1));
	char	  **rebuilt = palloc0(sizeof(char *) * Max(h->n, 1));
	int			nsrc = 0;
	bool		prev_kept = false;
	uint32		len;

	for (int i = 0; i < h->n; i++)
	{
		bool		kept = keep == NULL || keep[keep_from + i];

		if (kept)
		{
			V3Src	   *s = &src[nsrc];

			src_from_parsed(s, rec, &parsed[i]);
			if (s->delta && !(prev_kept && nsrc > 0))
			{
				/* its newer neighbour goes: store it whole */
				s->delta = false;
				s->datalen = parsed[i].datalen;
				s->data = NULL;
				if (out)
				{
					uint32		need = 1;
					char	   *buf;
					const char *data;
					uint32		datalen;

					for (int j = 0; j <= i; j++)
						need = Max(need, parsed[j].datalen);
					buf = palloc(need);
					apply_deltas(rec, parsed, i, buf, &data, &datalen);
					if (data != buf)
						memcpy(buf, data, datalen);
					rebuilt[i] = buf;
					s->data = buf;
				}
			}
			nsrc++;
		}
		prev_kept = kept;
	}
	w_begin(&w, out, outsize, nsrc, info, xinfo, xmax, succ);
	emit_versions(&w, src, nsrc);
	len = w_finish(&w);
	for (int i = 0; i < h->n; i++)
		if (rebuilt[i])
			pfree(rebuilt[i]);
	pfree(rebuilt);
	pfree(src);
	return len;
}

/* The header a record keeps when its (aborted) end goes */
static void
header_without_end(const V3Header *h, uint8 *info, uint8 *xinfo,
				   TransactionId *xmax, ItemPointerData *succ)
{
	*info = h->info & (MINIDB_R3_XMAX | MINIDB_R3_SUCC);
	*xinfo = h->xinfo & MINIDB_R3X_SPEC;
	*xmax = h->xmax;
	*succ = h->succ;
	if (!(h->xinfo & MINIDB_R3X_SPEC))
		*info &= ~MINIDB_R3_SUCC;
	if (h->xinfo & MINIDB_R3X_XMAX_MULTI)
		*xinfo |= MINIDB_R3X_XMAX_MULTI | MINIDB_R3X_LOCK_ONLY;	/* lockers stay */
	else
	{
		*info &= ~MINIDB_R3_XMAX;
		*xmax = InvalidTransactionId;
	}
}

uint32
v3_prune(char *rec, uint32 reclen, const bool *keep, bool sizeonly)
{
	V3Header	h;
	V3Version  *parsed = parse_valid(rec, reclen, &h, NULL, 0);
	uint8		info = h.info & ~MINIDB_R3_MULTI;
	uint8		xinfo = h.xinfo;
	TransactionId xmax = h.xmax;
	ItemPointerData succ = h.succ;
	int			base = h.has_end ? 1 : 0;
	int			kept = 0;
	char	   *tmp;
	uint32		len;

	for (int i = 0; i < h.n; i++)
		kept += keep[base + i] ? 1 : 0;
	if (kept == 0 && !(h.has_end && keep[0]))
	{
		pfree(parsed);
		return 0;
	}
	if (h.has_end && !keep[0])
		header_without_end(&h, &info, &xinfo, &xmax, &succ);
	len = rewrite(NULL, 0, rec, &h, parsed, keep, base, info, xinfo, xmax,
				  &succ);
	if (sizeonly)
	{
		pfree(parsed);
		return len;
	}

	/*
	 * Sizing says PG_UINT32_MAX when the result would exceed the format's
	 * limit: growth too (reclen is within it), refused like any other, never
	 * handed back as a length.
	 */
	if (len == PG_UINT32_MAX || len > MINIDB_R3_MAX_LEN)
		elog(ERROR, "minidb_record_prune would grow the record from %u bytes past the format %d limit of %u bytes",
			 reclen, MINIDB_FORMAT_V3, (uint32) MINIDB_R3_MAX_LEN);
	if (len > reclen)
		elog(ERROR, "minidb_record_prune would grow the record from %u to %u bytes",
			 reclen, len);
	tmp = palloc(len);
	len = rewrite(tmp, len, rec, &h, parsed, keep, base, info, xinfo, xmax,
				  &succ);
	memcpy(rec, tmp, len);
	pfree(tmp);
	pfree(parsed);
	return len;
}

uint32
v3_set_lockers(char *out, uint32 outsize, const char *rec, uint32 reclen,
			   const MinidbLockers *lk, bool sizeonly)
{
	V3Header	h;
	V3Version  *parsed = parse_valid(rec, reclen, &h, NULL, 0);
	uint8		info;
	uint8		xinfo;
	TransactionId xmax = InvalidTransactionId;
	ItemPointerData succ = h.succ;
	uint32		len;

	/*
	 * What stays: a speculative token, or an empty successor field; an
	 * (aborted) end goes, with a moved row's successor.
	 */
	info = h.info & MINIDB_R3_SUCC;
	xinfo = h.xinfo & MINIDB_R3X_SPEC;
	if (h.has_end && lk != NULL && lk->with_updater && lk->multi &&
		TransactionIdIsValid(lk->xid))
	{
		/*
		 * A MultiXactId of the row's ender and its lockers: the end stays
		 * (moved or deleted, with its successor), its xmax becomes the
		 * multixact, as heap's compute_new_xmax_infomask keeps an update
		 * beside the lockers that came after it.
		 */
		info = h.info & (MINIDB_R3_XMAX | MINIDB_R3_SUCC);
		xinfo = (h.xinfo & (MINIDB_R3X_MOVED | MINIDB_R3X_KEYS_UPDATED |
							MINIDB_R3X_MOVED_PART | MINIDB_R3X_SPEC)) |
			MINIDB_R3X_XMAX_MULTI;
		xmax = lk->xid;
	}
	else
	{
		if (h.has_end && !(h.xinfo & MINIDB_R3X_SPEC))
			info &= ~MINIDB_R3_SUCC;
		lockers_fields(lk, &info, &xinfo, &xmax);
	}

	if (prefix_len(info) == prefix_len(h.info))
	{
		/* the same layout: only the header changes */
		if (!sizeonly)
		{
			if (outsize < reclen)
				elog(ERROR, "minidb_record_set_lockers: output buffer too small");
			if (out != rec)
				memmove(out, rec, reclen);
			out[0] = (char) ((h.info & MINIDB_R3_MULTI) | MINIDB_FORMAT_V3 | info);
			out[1] = (char) xinfo;
			if (info & MINIDB_R3_XMAX)
				memcpy(out + MINIDB_R3_INFO_PREFIX, &xmax, R3_XMAX_SIZE);
			if (info & MINIDB_R3_SUCC)
				memcpy(out + succ_offset(info), &succ, R3_SUCC_SIZE);
		}
		pfree(parsed);
		return reclen;
	}
	if (!sizeonly)
	{
		const char *copy = source_copy(out, outsize, rec, reclen);

		if (copy != rec)
		{
			pfree(parsed);
			parsed = parse_valid(copy, reclen, &h, NULL, 0);
		}
		len = rewrite(out, outsize, copy, &h, parsed, NULL, 0, info, xinfo,
					  xmax, &succ);
		if (copy != rec)
			pfree((char *) copy);
	}
	else
		len = rewrite(NULL, 0, rec, &h, parsed, NULL, 0, info, xinfo, xmax,
					  &succ);
	pfree(parsed);
	return len;
}


/* ----------------------------------------------------------------
 *		The reference walker
 * ----------------------------------------------------------------
 */

int
v3_decode_all(const char *rec, uint32 reclen, MinidbVersionData **versions,
			  MinidbChainError *err)
{
	V3Header	h;
	V3Version  *parsed;
	MinidbVersionData *out;
	int			base;
	int			total;

	*versions = NULL;
	if (!check_header(rec, reclen, &h, err))
		return -1;
	parsed = palloc(sizeof(V3Version) * Max(h.n, 1));
	if (!check_all(rec, reclen, &h, parsed, err))
	{
		pfree(parsed);
		return -1;
	}
	base = h.has_end ? 1 : 0;
	total = h.n + base;
	out = palloc0(sizeof(MinidbVersionData) * total);
	if (h.has_end)
	{
		MinidbVersionRef ref;

		synth_marker((char *) rec, &h, &ref);
		out[0].xmin = ref.virt.raw_xmax;
		out[0].cid = ref.vh->vh_cid;
		out[0].flags = ref.vh->vh_flags;
		out[0].natts = 0;
		out[0].data = palloc(1);
		out[0].datalen = 0;
	}
	for (int i = 0; i < h.n; i++)
	{
		const V3Version *v = &parsed[i];
		MinidbVersionData *d = &out[base + i];
		char	   *data = palloc(Max(v->datalen, 1));

		d->xmin = v->vh->vh_xmin;
		d->cid = v->vh->vh_cid;
		d->flags = v->vh->vh_flags;
		d->natts = v->vh->vh_natts;
		if (v->vh->vh_flags & MINIDB_V_HASNULL)
		{
			bits8	   *bitmap = palloc(MINIDB_BITMAPLEN(v->vh->vh_natts));

			memcpy(bitmap, rec + v->bitmapoff, MINIDB_BITMAPLEN(v->vh->vh_natts));
			d->bitmap = bitmap;
		}
		if (!v->delta)
			memcpy(data, rec + v->dataoff, v->datalen);
		else
		{
			/* the newer version, already whole, is d[-1] */
			const MinidbVersionData *newer = d - 1;

			memcpy(data, newer->data, v->prefix);
			memcpy(data + v->prefix, rec + v->midoff, v->midlen);
			memcpy(data + v->prefix + v->midlen,
				   newer->data + newer->datalen - v->suffix, v->suffix);
		}
		d->data = data;
		d->datalen = v->datalen;
	}
	pfree(parsed);
	*versions = out;
	return total;
}
