/*-------------------------------------------------------------------------
 *
 * chain.c
 *	  The minidb record: build, prepend, prune, validate, and the two
 *	  walkers (the eager reference walker and the fast walker), for every
 *	  format; the V1 and V2 layouts.  The V3 layout is in chain_v3.c.
 *
 * This file knows the byte layout of a record (see chain.h) and nothing
 * else: no buffers, no relations, no snapshots, no WAL.  It never calls
 * ereport: damage is described in a MinidbChainError and the caller, who
 * knows which relation and TID it was reading, raises the ERROR.  elog is
 * used only for programming errors (an output buffer that is too small, a
 * chain that would exceed its limits).
 *
 * What a valid V1 record looks like (checked by minidb_record_validate
 * and, identically, by the fast walker on every read; V3's rules are at
 * the top of chain_v3.c):
 *
 *	record header
 *	  rh_format		MINIDB_FORMAT_V1
 *	  rh_flags		within MINIDB_REC_FLAGS_MASK
 *	  rh_len		== the length the caller has (reclen)
 *	  rh_nversions	1 .. MINIDB_MAX_VERSIONS, and that many minimal versions
 *					must fit in rh_len
 *	  rh_lockmode	<= MINIDB_LOCK_MAX; a lock mode other than NONE needs a
 *					valid rh_locker
 *	every version i (at MAXALIGN of the previous version's end)
 *	  its header lies inside the record; vh_len >= the header size and the
 *	  version ends inside the record; vh_xmin is not InvalidTransactionId;
 *	  vh_flags within MINIDB_V_FLAGS_MASK, encoding MINIDB_V_ENC_FULL, not
 *	  both xmin-committed and xmin-aborted, not frozen and xmin-aborted, not
 *	  both tombstone and moved; MOVED only on version 0, which then needs a
 *	  valid rh_successor; KEYS_UPDATED not on a tombstone; vh_reserved
 *	  zero; vh_natts <= MINIDB_MAX_NATTS,
 *	  and a null bitmap only when vh_natts > 0;
 *	  vh_hoff == MAXALIGN(header + null bitmap): canonical, as amcheck
 *	  demands of heap's t_hoff, so one content has one byte image;
 *	  markers (tombstone, moved) carry no data: vh_natts 0, no data flags
 *	  (HASNULL, HASVARWIDTH, HASEXTERNAL), vh_len == vh_hoff == the header
 *	  size.
 *	the tail: the last version ends exactly at rh_len, no trailing bytes.
 *
 * Format V2 adds (see chain.h): rh_len <= MINIDB_V2_MAX_LEN and the
 * directory fits with n minimal versions; dir[0] == MINIDB_V2_DATA_START(n);
 * version i lies at dir[i]; dir[i+1] == MAXALIGN(dir[i] + vh_len) for every
 * i < n-1 (errors in field "rh_dir", reported at version i); the last
 * version ends exactly at rh_len.  Validate, the reference walker and the
 * iterator check all of it, version by version, in that order.  The V2
 * fast walker checks the record header, dir[0], then the versions it
 * visits in the same order (so up to there it reports exactly what
 * validate reports), then the last version on its own (its directory
 * entry MAXALIGNed and past the room versions 0..n-2 need at least; its
 * header; its end at rh_len), and does not look at unvisited middle
 * versions: see chain.h for that trade-off.
 *
 * The V1 fast walker performs all of these checks: they are all header fields,
 * 16 bytes per version, so validate and the fast walker agree on exactly
 * which records are damaged and on the error they report.  What makes the
 * fast walker fast is what it does not do: it copies nothing and decodes no
 * attribute.  The common case (a data version with consistent hints) passes
 * one branch-free test, version_plainly_valid; anything else goes through
 * the detailed checks, which also choose the error.  Builds with
 * -DMINIDB_CHECK_FAST_PATH (unit tests, fuzzer) run both and elog(ERROR)
 * if the shortcut ever accepts what the detailed checks refuse.
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

#include <stdarg.h>

#include "access/transam.h"
#include "chain_int.h"

#define MINIDB_V_DATA_FLAGS \
	(MINIDB_V_HASNULL | MINIDB_V_HASVARWIDTH | MINIDB_V_HASEXTERNAL)

#define set_error minidb_chain_set_error

/* The format builders make (the GUC minidb.record_format) */
int			minidb_record_format = MINIDB_FORMAT_CURRENT;

/* Resolves a multixact's updater for V3 virtual markers (server only) */
MinidbMultiUpdaterFn minidb_multi_updater_hook = NULL;

StaticAssertDecl(sizeof(MinidbRecordHeader) <= MINIDB_V2_DIR_OFFSET &&
				 MINIDB_V2_DIR_OFFSET % sizeof(uint16) == 0,
				 "the V2 directory starts right after the record header");
/* so a one-version record has the same length in both formats */
StaticAssertDecl(MINIDB_V2_DATA_START(1) == MINIDB_RECORD_HDRSZ,
				 "a one-entry V2 directory fits in the header's padding");


/* ----------------------------------------------------------------
 *		Errors
 * ----------------------------------------------------------------
 */

/* Fill in *err (if any) and return false, so checks can "return set_error" */
bool
minidb_chain_set_error(MinidbChainError *err, int version, const char *field,
					   const char *fmt,...)
{
	va_list		ap;

	if (err == NULL)
		return false;
	err->version = version;
	err->field = field;
	va_start(ap, fmt);
	vsnprintf(err->detail, sizeof(err->detail), fmt, ap);
	va_end(ap);
	return false;
}

static inline const MinidbVersionHeaderV1 *
version_at(const char *rec, uint32 offset)
{
	return (const MinidbVersionHeaderV1 *) (rec + offset);
}

static pg_attribute_always_inline uint32
canonical_hoff(uint16 flags, uint16 natts)
{
	uint32		bitmaplen = minidb_version_bitmaplen(flags, natts);

	return MAXALIGN(MINIDB_V1_VERSION_HDRSZ + bitmaplen);
}


/* A walker's ref to the V1/V2 version at offset (checked) */
static pg_attribute_always_inline void
fill_ref_v1(char *rec, uint32 reclen, int index, uint32 offset,
			MinidbVersionRef *ref)
{
	const MinidbVersionHeaderV1 *vh = version_at(rec, offset);

	ref->index = index;
	ref->offset = offset;
	ref->vh = (MinidbVersionHeader *) (rec + offset);
	ref->end = offset + vh->vh_len;
	ref->dataoff = offset + vh->vh_hoff;
	ref->datalen = vh->vh_len - vh->vh_hoff;
	ref->bitmapoff = offset + MINIDB_V1_VERSION_HDRSZ;
	ref->reclen = reclen;
}


/* ----------------------------------------------------------------
 *		Checks shared by the validator and the fast walker
 * ----------------------------------------------------------------
 */

/* Check the record header.  Reads nothing past reclen. */
static bool
check_record_header(const char *rec, uint32 reclen, MinidbChainError *err)
{
	const MinidbRecordHeader *hdr = (const MinidbRecordHeader *) rec;
	uint32		n;

	if (reclen < MINIDB_RECORD_HDRSZ)
		return set_error(err, -1, "rh_len",
						 "record length %u is shorter than the record header (%u bytes)",
						 reclen, (uint32) MINIDB_RECORD_HDRSZ);
	if (hdr->rh_format != MINIDB_FORMAT_V1 &&
		hdr->rh_format != MINIDB_FORMAT_V2)
		return set_error(err, -1, "rh_format",
						 "unknown record format %u (this build reads formats %u to %u)",
						 hdr->rh_format, MINIDB_FORMAT_V1, MINIDB_FORMAT_MAX);
	if (hdr->rh_flags & ~MINIDB_REC_FLAGS_MASK)
		return set_error(err, -1, "rh_flags", "unknown flag bits 0x%02x",
						 hdr->rh_flags & ~MINIDB_REC_FLAGS_MASK);
	if (hdr->rh_len != reclen)
		return set_error(err, -1, "rh_len",
						 "header says %u bytes but the record is %u bytes",
						 hdr->rh_len, reclen);

	n = hdr->rh_nversions;
	if (n == 0)
		return set_error(err, -1, "rh_nversions",
						 "a record holds at least one version");
	if (n > MINIDB_MAX_VERSIONS)
		return set_error(err, -1, "rh_nversions",
						 "%u versions exceed the limit of %u", n,
						 MINIDB_MAX_VERSIONS);
	if (hdr->rh_format == MINIDB_FORMAT_V2 && reclen > MINIDB_V2_MAX_LEN)
		return set_error(err, -1, "rh_len",
						 "record of %u bytes exceeds the format %u limit of %u bytes",
						 reclen, MINIDB_FORMAT_V2, MINIDB_V2_MAX_LEN);
	if ((uint64) (hdr->rh_format == MINIDB_FORMAT_V2 ?
				  MINIDB_V2_DATA_START(n) : MINIDB_RECORD_HDRSZ) +
		(uint64) n * MAXALIGN(MINIDB_V1_VERSION_HDRSZ) > (uint64) reclen)
		return set_error(err, -1, "rh_nversions",
						 "%u versions cannot fit in a record of %u bytes",
						 n, reclen);

	if (hdr->rh_lockmode > MINIDB_LOCK_MAX)
		return set_error(err, -1, "rh_lockmode", "unknown lock mode %u",
						 hdr->rh_lockmode);
	if (hdr->rh_lockmode != MINIDB_LOCK_NONE &&
		hdr->rh_locker == InvalidTransactionId)
		return set_error(err, -1, "rh_locker",
						 "lock mode %u is held by an invalid locker",
						 hdr->rh_lockmode);
	return true;
}

/*
 * V1, V2: does rh_successor hold where a moved row went (a TID, or
 * heap's moved-to-another-partition mark) rather than nothing or a
 * speculative token?  Only a moved head sets it; pruning an aborted
 * moved head clears it (legacy_prune), but records pruned by builds
 * before 2026-12 may keep it under an older data version, so the check
 * below holds it against the one data version a marker could turn into
 * when its flag is lost: one without attributes.  A table has one only
 * when it has no columns.
 */
static pg_attribute_always_inline bool
legacy_has_successor(const char *rec)
{
	OffsetNumber posid = minidb_record_header(rec)->rh_successor.ip_posid;

	return posid != 0 && posid != MINIDB_SPEC_TOKEN_OFFSET;
}

/* Check vh_flags, alone and against the version's position */
static pg_attribute_always_inline bool
check_version_flags(const char *rec, const MinidbVersionHeaderV1 *vh,
					int index, MinidbChainError *err)
{
	uint16		flags = vh->vh_flags;

	if (flags & ~MINIDB_V_FLAGS_MASK)
		return set_error(err, index, "vh_flags", "unknown flag bits 0x%04x",
						 flags & ~MINIDB_V_FLAGS_MASK);
	if ((flags & MINIDB_V_ENC_MASK) != MINIDB_V_ENC_FULL)
		return set_error(err, index, "vh_flags", "unknown data encoding %u",
						 (flags & MINIDB_V_ENC_MASK) >> 8);
	if ((flags & MINIDB_V_XMIN_COMMITTED) && (flags & MINIDB_V_XMIN_ABORTED))
		return set_error(err, index, "vh_flags",
						 "xmin is hinted both committed and aborted");
	if ((flags & MINIDB_V_FROZEN) && (flags & MINIDB_V_XMIN_ABORTED))
		return set_error(err, index, "vh_flags",
						 "xmin is hinted both frozen and aborted");
	if ((flags & MINIDB_V_TOMBSTONE) && (flags & MINIDB_V_MOVED))
		return set_error(err, index, "vh_flags",
						 "version is both a tombstone and a moved marker");
	if ((flags & MINIDB_V_KEYS_UPDATED) && (flags & MINIDB_V_TOMBSTONE))
		return set_error(err, index, "vh_flags",
						 "keys-updated flag on a tombstone");
	if ((flags & MINIDB_V_MOVED) && index != 0)
		return set_error(err, index, "vh_flags",
						 "moved marker on version %d: only the newest version may be moved",
						 index);
	if ((flags & MINIDB_V_MOVED) &&
		((const MinidbRecordHeader *) rec)->rh_successor.ip_posid == 0)
		return set_error(err, index, "rh_successor",
						 "moved row has no valid successor TID");
	if (index == 0 && !(flags & MINIDB_V_NODATA_MASK) && vh->vh_natts == 0 &&
		legacy_has_successor(rec))
		return set_error(err, index, "rh_successor",
						 "a successor TID on a row whose newest version has no attributes (a moved marker that lost its flag)");
	return true;
}

/* Check the shape of a version: attributes, bitmap, data offset, markers */
static pg_attribute_always_inline bool
check_version_shape(const MinidbVersionHeaderV1 *vh, int index,
					MinidbChainError *err)
{
	uint32		hoff = canonical_hoff(vh->vh_flags, vh->vh_natts);

	if (vh->vh_reserved != 0)
		return set_error(err, index, "vh_reserved",
						 "reserved byte is %u, expected 0", vh->vh_reserved);
	if (vh->vh_flags & MINIDB_V_NODATA_MASK)
	{
		if (vh->vh_natts != 0)
			return set_error(err, index, "vh_natts",
							 "a tombstone or moved marker carries no attributes, but vh_natts is %u",
							 vh->vh_natts);
		if (vh->vh_flags & MINIDB_V_DATA_FLAGS)
			return set_error(err, index, "vh_flags",
							 "a tombstone or moved marker carries data flags 0x%04x",
							 vh->vh_flags & MINIDB_V_DATA_FLAGS);
	}
	if (vh->vh_natts > MINIDB_MAX_NATTS)
		return set_error(err, index, "vh_natts",
						 "%u attributes exceed the limit of %u",
						 vh->vh_natts, MINIDB_MAX_NATTS);
	if ((vh->vh_flags & MINIDB_V_HASNULL) && vh->vh_natts == 0)
		return set_error(err, index, "vh_flags",
						 "null bitmap flagged on a version without attributes");
	if (vh->vh_hoff != MAXALIGN(vh->vh_hoff))
		return set_error(err, index, "vh_hoff",
						 "data offset %u is not MAXALIGNed", vh->vh_hoff);
	if (vh->vh_hoff != hoff)
		return set_error(err, index, "vh_hoff",
						 "data offset %u, expected %u after header and null bitmap",
						 vh->vh_hoff, hoff);
	if (vh->vh_hoff > vh->vh_len)
		return set_error(err, index, "vh_hoff",
						 "data offset %u lies past the version end %u",
						 vh->vh_hoff, vh->vh_len);
	if ((vh->vh_flags & MINIDB_V_NODATA_MASK) && vh->vh_len != vh->vh_hoff)
		return set_error(err, index, "vh_len",
						 "a tombstone or moved marker carries no data, but has %u data bytes",
						 vh->vh_len - vh->vh_hoff);
	return true;
}

/*
 * The common case in a few branch-free tests: a data version (no marker),
 * hints consistent, known flags, canonical data offset, inside the record.
 * True implies that every check below passes; false sends the version
 * through them to find out what, if anything, is wrong.
 */
static pg_attribute_always_inline bool
version_plainly_valid(const MinidbVersionHeaderV1 *vh, uint32 offset,
					  uint32 reclen)
{
	const uint16 plain = MINIDB_V_HINT_MASK | MINIDB_V_DATA_FLAGS;
	uint16		flags = vh->vh_flags;
	uint32		len = vh->vh_len;
	bool		ok;

	ok = ((uint64) offset + len <= reclen);
	ok &= (vh->vh_xmin != InvalidTransactionId);
	ok &= ((flags & ~plain) == 0);
	ok &= (!(flags & MINIDB_V_XMIN_ABORTED) ||
		   !(flags & (MINIDB_V_XMIN_COMMITTED | MINIDB_V_FROZEN)));
	ok &= (vh->vh_reserved == 0);
	/* 1..MAX: a version without attributes may be a marker that lost its flag */
	ok &= ((uint32) vh->vh_natts - 1 < MINIDB_MAX_NATTS);
	ok &= (vh->vh_hoff == canonical_hoff(flags, vh->vh_natts));
	ok &= (vh->vh_hoff <= len);
	return ok;
}

/* Every check of one version, in the order that picks the error reported */
static pg_attribute_always_inline bool
check_version_detailed(const char *rec, uint32 reclen, int index,
					   uint32 offset, const MinidbVersionHeaderV1 *vh,
					   MinidbChainError *err)
{
	if (vh->vh_len < MINIDB_V1_VERSION_HDRSZ)
		return set_error(err, index, "vh_len",
						 "length %u is shorter than the version header (%u bytes)",
						 vh->vh_len, (uint32) MINIDB_V1_VERSION_HDRSZ);
	if ((uint64) offset + vh->vh_len > reclen)
		return set_error(err, index, "vh_len",
						 "length %u at offset %u runs past record end %u",
						 vh->vh_len, offset, reclen);
	if (vh->vh_xmin == InvalidTransactionId)
		return set_error(err, index, "vh_xmin",
						 "creating transaction is InvalidTransactionId");
	if (!check_version_flags(rec, vh, index, err))
		return false;
	return check_version_shape(vh, index, err);
}

/*
 * Check version 'index' of a record whose header passed check_record_header,
 * starting at 'offset'.  Bounds first, so that no field is read unless the
 * whole version header lies inside the record.
 */
static pg_attribute_always_inline bool
check_version(const char *rec, uint32 reclen, int index, uint32 offset,
			  MinidbChainError *err)
{
	const MinidbVersionHeaderV1 *vh;

	if ((uint64) offset + MINIDB_V1_VERSION_HDRSZ > reclen)
		return set_error(err, index, "rh_nversions",
						 "record ends at %u before version %d of %u begins",
						 reclen, index,
						 ((const MinidbRecordHeader *) rec)->rh_nversions);
	vh = version_at(rec, offset);
#ifndef MINIDB_CHECK_FAST_PATH
	if (likely(version_plainly_valid(vh, offset, reclen)))
		return true;
#else
	/* fuzz builds: the shortcut must never accept what the checks refuse */
	if (version_plainly_valid(vh, offset, reclen) &&
		!check_version_detailed(rec, reclen, index, offset, vh, err))
		elog(ERROR, "version_plainly_valid accepted version %d: field \"%s\": %s",
			 index, err ? err->field : "?", err ? err->detail : "?");
#endif
	return check_version_detailed(rec, reclen, index, offset, vh, err);
}

/* The tail check: the last version ends exactly where the record ends */
static inline bool
check_tail(uint32 end, uint32 reclen, int last, MinidbChainError *err)
{
	if (end != reclen)
		return set_error(err, last, "vh_len",
						 "last version ends at %u but the record ends at %u (%u trailing bytes)",
						 end, reclen, reclen - end);
	return true;
}


/*
 * V2: dir[0] is where the directory ends (checked once per read).  Called
 * after check_record_header, which proved that the directory lies inside
 * the record.
 */
static inline bool
check_dir_head(const char *rec, MinidbChainError *err)
{
	int			n = minidb_record_header(rec)->rh_nversions;
	uint32		want = MINIDB_V2_DATA_START(n);
	uint32		got = minidb_record_dir(rec)[0];

	if (got != want)
		return set_error(err, 0, "rh_dir",
						 "directory entry 0 is %u, expected %u (the end of a directory of %d entries)",
						 got, want, n);
	return true;
}

/*
 * V2: version 'index' at 'offset' passed check_version; check where it
 * ends.  Not the last: the next directory entry must be MAXALIGN(its end),
 * returned in *next.  The last: it must end at reclen.
 */
static pg_attribute_always_inline bool
check_link(const char *rec, uint32 reclen, int index, uint32 offset,
		   uint32 *next, MinidbChainError *err)
{
	int			n = minidb_record_header(rec)->rh_nversions;
	uint32		end = offset + version_at(rec, offset)->vh_len;

	if (index < n - 1)
	{
		uint32		want = MAXALIGN(end);

		*next = minidb_record_dir(rec)[index + 1];
		if (unlikely(*next != want))
			return set_error(err, index, "rh_dir",
							 "version %d ends at %u, so version %d starts at %u, but directory entry %d is %u",
							 index, end, index + 1, want, index + 1, *next);
		return true;
	}
	*next = end;
	return check_tail(end, reclen, index, err);
}

/*
 * V2, the fast walker's tail check without a walk: the last version's
 * directory entry, its header, its end.  Errors are reported at version
 * n-1.  A version can start no earlier than dir[0] plus n-1 minimal
 * versions; that bound (not the link from version n-2, which would need
 * version n-2) keeps the last version clear of the header and directory.
 */
static pg_attribute_always_inline bool
check_last_v2(const char *rec, uint32 reclen, MinidbChainError *err)
{
	int			n = minidb_record_header(rec)->rh_nversions;
	uint32		offset = minidb_record_dir(rec)[n - 1];
	uint32		lowest = MINIDB_V2_DATA_START(n) +
		(uint32) (n - 1) * MAXALIGN(MINIDB_V1_VERSION_HDRSZ);

	if (unlikely(offset != MAXALIGN(offset) || offset < lowest))
		return set_error(err, n - 1, "rh_dir",
						 "directory entry %d is %u, not a MAXALIGNed offset at or past %u",
						 n - 1, offset, lowest);
	if (unlikely(!check_version(rec, reclen, n - 1, offset, err)))
		return false;
	return check_tail(offset + version_at(rec, offset)->vh_len, reclen,
					  n - 1, err);
}


/* ----------------------------------------------------------------
 *		Validation
 * ----------------------------------------------------------------
 */

/*
 * Check every header field of the record and of each version, and that the
 * versions tile the record exactly.  On failure *err says where and what.
 */
bool
minidb_record_validate(const char *rec, uint32 reclen, MinidbChainError *err)
{
	uint32		end = MINIDB_RECORD_HDRSZ;
	int			n;
	int			i;

	if (reclen >= 1 && minidb_record_format_of(rec) == MINIDB_FORMAT_V3)
		return v3_validate(rec, reclen, err);
	if (!check_record_header(rec, reclen, err))
		return false;
	n = minidb_record_header(rec)->rh_nversions;
	if (minidb_record_header(rec)->rh_format == MINIDB_FORMAT_V2)
	{
		uint32		offset;

		if (!check_dir_head(rec, err))
			return false;
		offset = minidb_record_dir(rec)[0];
		for (i = 0; i < n; i++)
		{
			if (!check_version(rec, reclen, i, offset, err) ||
				!check_link(rec, reclen, i, offset, &offset, err))
				return false;
		}
		return true;
	}
	for (i = 0; i < n; i++)
	{
		uint32		offset = MAXALIGN(end);

		if (!check_version(rec, reclen, i, offset, err))
			return false;
		end = offset + version_at(rec, offset)->vh_len;
	}
	return check_tail(end, reclen, n - 1, err);
}


/* ----------------------------------------------------------------
 *		Builders
 * ----------------------------------------------------------------
 */

/* Bytes a version takes in a record, before alignment padding */
uint32
minidb_version_size(const MinidbVersionData *v)
{
	if (v->natts > MINIDB_MAX_NATTS)
		elog(ERROR, "minidb version with %u attributes exceeds the limit of %u",
			 v->natts, MINIDB_MAX_NATTS);
	return canonical_hoff(v->flags, v->natts) + v->datalen;
}

/* Size of v, refusing what a uint16 vh_len cannot describe */
static uint32
checked_version_size(const MinidbVersionData *v)
{
	uint32		size = minidb_version_size(v);

	if (v->datalen > MINIDB_MAX_VERSION_LEN || size > MINIDB_MAX_VERSION_LEN)
		elog(ERROR, "minidb version of %u data bytes exceeds the limit of %u bytes",
			 v->datalen, (uint32) MINIDB_MAX_VERSION_LEN);
	return size;
}

/* Write version v at dst (MAXALIGNed); padding is zeroed.  Returns its size. */
static uint32
write_version(char *dst, const MinidbVersionData *v)
{
	MinidbVersionHeaderV1 *vh = (MinidbVersionHeaderV1 *) dst;
	uint32		size = checked_version_size(v);
	uint32		hoff = canonical_hoff(v->flags, v->natts);

	memset(dst, 0, hoff);
	vh->vh_xmin = v->xmin;
	vh->vh_cid = v->cid;
	vh->vh_flags = v->flags;
	vh->vh_natts = v->natts;
	vh->vh_len = (uint16) size;
	vh->vh_hoff = (uint8) hoff;
	vh->vh_reserved = 0;
	if (v->flags & MINIDB_V_HASNULL)
		memcpy(dst + MINIDB_V1_VERSION_HDRSZ, v->bitmap,
			   MINIDB_BITMAPLEN(v->natts));
	if (v->datalen > 0)
		memcpy(dst + hoff, v->data, v->datalen);
	return size;
}

/* The largest record of the given format, for builders' checks */
static void
check_record_len(uint64 len, int format)
{
	if (format == MINIDB_FORMAT_V2 && len > MINIDB_V2_MAX_LEN)
		elog(ERROR, "minidb record of format %d would take " UINT64_FORMAT " bytes, more than its limit of %u",
			 format, len, (uint32) MINIDB_V2_MAX_LEN);
}

/* Where the versions of a record of format, holding n versions, begin */
static inline uint32
data_start(int format, int n)
{
	return format == MINIDB_FORMAT_V2 ? MINIDB_V2_DATA_START(n) :
		MINIDB_RECORD_HDRSZ;
}

/* V1, V2: the record-level fields extra gives, in the header */
static void
legacy_apply_extra(MinidbRecordHeader *hdr, const MinidbRecordEnd *extra)
{
	if (extra == NULL)
		return;
	if (extra->lockers)
	{
		const MinidbLockers *lk = extra->lockers;

		hdr->rh_locker = lk->xid;
		hdr->rh_lockmode = TransactionIdIsValid(lk->xid) ?
			Max(lk->mode, MINIDB_LOCK_KEYSHARE) : MINIDB_LOCK_NONE;
		hdr->rh_flags = (hdr->rh_flags & ~MINIDB_REC_LOCK_MULTI) |
			(lk->multi && TransactionIdIsValid(lk->xid) ?
			 MINIDB_REC_LOCK_MULTI : 0);
	}
	if (extra->drop_lockers)
	{
		hdr->rh_locker = InvalidTransactionId;
		hdr->rh_lockmode = MINIDB_LOCK_NONE;
		hdr->rh_flags &= ~MINIDB_REC_LOCK_MULTI;
	}
	if (extra->moved_part)
		hdr->rh_flags |= MINIDB_REC_MOVED_PART;
	if (extra->successor)
		hdr->rh_successor = *extra->successor;
}

/*
 * Build a record holding the single version v, of the given format.
 * Returns its length.
 */
static uint32
legacy_build(char *out, uint32 outsize, const MinidbVersionData *v,
			 int format, const MinidbRecordEnd *extra)
{
	MinidbRecordHeader *hdr = (MinidbRecordHeader *) out;
	uint32		start;
	uint32		len;

	start = data_start(format, 1);
	len = start + checked_version_size(v);
	check_record_len(len, format);
	if (out == NULL)
		return len;
	if (outsize < len)
		elog(ERROR, "minidb_record_build: output buffer of %u bytes, need %u",
			 outsize, len);
	memset(out, 0, start);
	hdr->rh_format = (uint8) format;
	hdr->rh_flags = 0;
	hdr->rh_nversions = 1;
	hdr->rh_len = len;
	hdr->rh_locker = InvalidTransactionId;
	hdr->rh_lockmode = MINIDB_LOCK_NONE;
	ItemPointerSetInvalid(&hdr->rh_successor);
	if (format == MINIDB_FORMAT_V2)
		minidb_record_dir(out)[0] = (uint16) start;
	write_version(out + start, v);
	legacy_apply_extra(hdr, extra);
	return len;
}

/*
 * Build a record of the given format holding the single version v, with
 * the lockers or speculative token extra gives (may be NULL).  out NULL:
 * only the length.
 */
uint32
minidb_record_build_ex(char *out, uint32 outsize, const MinidbVersionData *v,
					   int format, const MinidbRecordEnd *extra)
{
	if (format == MINIDB_FORMAT_V3)
		return v3_build(out, outsize, v, extra);
	if (format != MINIDB_FORMAT_V1 && format != MINIDB_FORMAT_V2)
		elog(ERROR, "minidb_record_build: unknown record format %d", format);
	return legacy_build(out, outsize, v, format, extra);
}

uint32
minidb_record_build_as(char *out, uint32 outsize, const MinidbVersionData *v,
					   int format)
{
	return minidb_record_build_ex(out, outsize, v, format, NULL);
}

/* Build a record of format minidb_record_format holding v */
uint32
minidb_record_build(char *out, uint32 outsize, const MinidbVersionData *v)
{
	return minidb_record_build_as(out, outsize, v, minidb_record_format);
}

/*
 * V1, V2: prepend v as the new newest version of rec, writing the result
 * to out (NULL: only the length).  out may be rec itself (in place,
 * outsize covering the grown record) or overlap it.  The record header is
 * kept except for the count and length; so is the format.  rec must be a
 * valid record; prepending onto a moved head makes it invalid, so callers
 * remove such a marker (its move aborted) first.
 */
static uint32
legacy_prepend(char *out, uint32 outsize, const char *rec,
			   uint32 reclen, const MinidbVersionData *v)
{
	MinidbRecordHeader old;
	MinidbRecordHeader *hdr = (MinidbRecordHeader *) out;
	uint32		newlen;
	uint32		vsize;
	uint32		slot;
	uint32		oldstart;
	uint32		newstart;
	int			n;
	uint16		olddir[MINIDB_V2_MAX_LEN / (MINIDB_V1_VERSION_HDRSZ + sizeof(uint16)) + 1];

	Assert(reclen >= MINIDB_RECORD_HDRSZ);
	memcpy(&old, rec, sizeof(old));
	n = old.rh_nversions;
	if (n >= MINIDB_MAX_VERSIONS)
		elog(ERROR, "minidb record already holds %u versions, the limit",
			 old.rh_nversions);
	vsize = checked_version_size(v);
	slot = MAXALIGN(vsize);
	oldstart = data_start(old.rh_format, n);
	newstart = data_start(old.rh_format, n + 1);
	newlen = reclen + slot + (newstart - oldstart);
	check_record_len(newlen, old.rh_format);
	if (out == NULL)
		return newlen;
	if (outsize < newlen)
		elog(ERROR, "minidb_record_prepend: output buffer of %u bytes, need %u",
			 outsize, newlen);
	if (old.rh_format == MINIDB_FORMAT_V2)
	{
		/* a valid record of at most MINIDB_V2_MAX_LEN bytes always fits */
		if (n >= lengthof(olddir))
			elog(ERROR, "minidb_record_prepend on a damaged record of %d versions", n);
		memcpy(olddir, minidb_record_dir(rec), sizeof(uint16) * n);
	}

	memmove(out + newstart + slot, rec + oldstart, reclen - oldstart);
	write_version(out + newstart, v);
	memset(out + newstart + vsize, 0, slot - vsize);

	memset(out, 0, newstart);
	memcpy(hdr, &old, sizeof(old));
	hdr->rh_nversions = n + 1;
	hdr->rh_len = newlen;
	if (old.rh_format == MINIDB_FORMAT_V2)
	{
		uint16	   *dir = minidb_record_dir(out);
		uint32		shift = newstart + slot - oldstart;
		int			i;

		dir[0] = (uint16) newstart;
		for (i = 0; i < n; i++)
			dir[i + 1] = (uint16) (olddir[i] + shift);
	}
	return newlen;
}

/* V1, V2: minidb_record_prune */
static uint32
legacy_prune(char *rec, uint32 reclen, const bool *keep)
{
	MinidbRecordHeader *hdr = (MinidbRecordHeader *) rec;
	MinidbChainIter it;
	MinidbVersionRef ref;
	MinidbChainError err;
	uint32		end;
	int			kept = 0;
	bool		damaged;
	uint32	   *offsets = NULL;
	uint32	   *lens = NULL;

	if (!minidb_chain_iter_init(&it, rec, reclen, &err))
		elog(ERROR, "minidb_record_prune on a damaged record: version %d, field \"%s\": %s",
			 err.version, err.field, err.detail);
	if (it.format == MINIDB_FORMAT_V2)
	{
		/*
		 * Find the kept versions first: the new, shorter directory and the
		 * versions moved down may overwrite old directory entries.
		 */
		offsets = palloc(sizeof(uint32) * it.nversions);
		lens = palloc(sizeof(uint32) * it.nversions);
	}
	end = data_start(it.format, 0);	/* V1: the header; V2: unused */
	while (minidb_chain_iter_next(&it, &ref, &err, &damaged))
	{
		uint32		len = minidb_ref_size(&ref);
		uint32		dst;

		if (!keep[ref.index])
			continue;
		if (offsets)
		{
			offsets[kept] = ref.offset;
			lens[kept] = len;
			kept++;
			continue;
		}
		/* dst <= ref.offset: moving down never overwrites unread versions */
		dst = MAXALIGN(end);
		memset(rec + end, 0, dst - end);
		memmove(rec + dst, rec + ref.offset, len);
		end = dst + len;
		kept++;
	}
	if (damaged)
		elog(ERROR, "minidb_record_prune on a damaged record: version %d, field \"%s\": %s",
			 err.version, err.field, err.detail);
	if (offsets && kept > 0)
	{
		uint32		start = MINIDB_V2_DATA_START(kept);
		uint16	   *dir = minidb_record_dir(rec);
		int			i;

		/* offsets[i] >= where version i goes: moving down, in order */
		end = start;
		for (i = 0; i < kept; i++)
		{
			uint32		dst = MAXALIGN(end);

			Assert(dst <= offsets[i]);
			memmove(rec + dst, rec + offsets[i], lens[i]);
			offsets[i] = dst;	/* now the new offset */
			end = dst + lens[i];
		}
		/* the directory and the padding between the versions */
		memset(rec + MINIDB_V2_DIR_OFFSET, 0, start - MINIDB_V2_DIR_OFFSET);
		for (i = 0; i < kept; i++)
		{
			dir[i] = (uint16) offsets[i];
			if (i > 0)
			{
				uint32		prev_end = offsets[i - 1] + lens[i - 1];

				memset(rec + prev_end, 0, offsets[i] - prev_end);
			}
		}
	}
	if (offsets)
	{
		pfree(offsets);
		pfree(lens);
	}
	if (kept == 0)
		return 0;
	hdr->rh_nversions = kept;
	hdr->rh_len = end;
	if (!keep[0] && legacy_has_successor(rec))
	{
		/*
		 * The head went (an aborted move): its successor goes with it, as
		 * a V3 record's end takes its successor field along, so that a
		 * successor always stands under a moved head.
		 */
		ItemPointerSetInvalid(&hdr->rh_successor);
		hdr->rh_flags &= ~MINIDB_REC_MOVED_PART;
	}
	return end;
}


/* ----------------------------------------------------------------
 *		The record API, every format
 * ----------------------------------------------------------------
 */

/* Exact length of a record of the given format holding vs[0..n-1] */
uint64
minidb_record_size(const MinidbVersionData *vs, int n, int format)
{
	uint64		len;

	if (format == MINIDB_FORMAT_V3)
	{
		MinidbRecordEnd extra;
		ItemPointerData any;
		uint32		v3len;

		/* a moved row's successor takes room whatever it is */
		memset(&extra, 0, sizeof(extra));
		ItemPointerSet(&any, 0, 1);
		extra.successor = &any;
		v3len = v3_from_versions(NULL, 0, vs, n, &extra, true);
		return v3len;
	}
	len = data_start(format, n);
	for (int i = 0; i < n; i++)
	{
		uint32		size = checked_version_size(&vs[i]);

		len += (i < n - 1) ? MAXALIGN(size) : size;
	}
	return len;
}

/* Does a legacy record hold a marker below its newest version? */
static bool
legacy_has_inner_marker(const char *rec, uint32 reclen)
{
	MinidbChainIter it;
	MinidbVersionRef ref;
	MinidbChainError err;
	bool		damaged;

	if (!minidb_chain_iter_init(&it, (char *) rec, reclen, &err))
		return true;
	while (minidb_chain_iter_next(&it, &ref, &err, &damaged))
		if (ref.index > 0 && (ref.vh->vh_flags & MINIDB_V_NODATA_MASK))
			return true;
	return damaged;
}

/*
 * The format a write to rec produces: V3 when minidb.record_format asks
 * for it (a V1 or V2 record is rewritten, unless it holds a marker below
 * its head, which V3 cannot express), else rec's own.
 */
int
minidb_record_write_format(const char *rec)
{
	int			format = minidb_record_format_of(rec);

	if (format == MINIDB_FORMAT_V3 || minidb_record_format != MINIDB_FORMAT_V3)
		return format;
	if (legacy_has_inner_marker(rec, minidb_record_header(rec)->rh_len))
		return format;
	return MINIDB_FORMAT_V3;
}

/* A legacy record's row lockers */
static void
legacy_get_lockers(const char *rec, MinidbLockers *lk)
{
	const MinidbRecordHeader *rh = minidb_record_header(rec);

	lk->with_updater = false;
	if (rh->rh_lockmode == MINIDB_LOCK_NONE ||
		!TransactionIdIsValid(rh->rh_locker))
	{
		lk->xid = InvalidTransactionId;
		lk->mode = MINIDB_LOCK_NONE;
		lk->multi = false;
		return;
	}
	lk->xid = rh->rh_locker;
	lk->mode = rh->rh_lockmode;
	lk->multi = (rh->rh_flags & MINIDB_REC_LOCK_MULTI) != 0;
}

void
minidb_record_get_lockers(const char *rec, MinidbLockers *lk)
{
	if (minidb_record_format_of(rec) == MINIDB_FORMAT_V3)
		v3_get_lockers(rec, lk);
	else
		legacy_get_lockers(rec, lk);
}

bool
minidb_record_get_single_ender(const char *rec, TransactionId *xid,
							   bool *keys_updated)
{
	if (minidb_record_format_of(rec) != MINIDB_FORMAT_V3)
		return false;
	return v3_get_single_ender(rec, xid, keys_updated);
}

bool
minidb_record_get_successor(const char *rec, ItemPointer succ,
							bool *moved_part)
{
	const MinidbRecordHeader *rh;

	if (minidb_record_format_of(rec) == MINIDB_FORMAT_V3)
		return v3_get_successor(rec, succ, moved_part);
	rh = minidb_record_header(rec);
	*moved_part = (rh->rh_flags & MINIDB_REC_MOVED_PART) != 0;
	*succ = rh->rh_successor;
	return !*moved_part && rh->rh_successor.ip_posid != 0 &&
		rh->rh_successor.ip_posid != MINIDB_SPEC_TOKEN_OFFSET;
}

uint32
minidb_record_spec_token(const char *rec)
{
	const MinidbRecordHeader *rh;

	if (minidb_record_format_of(rec) == MINIDB_FORMAT_V3)
		return v3_spec_token(rec);
	rh = minidb_record_header(rec);
	if (rh->rh_successor.ip_posid != MINIDB_SPEC_TOKEN_OFFSET)
		return 0;
	return ItemPointerGetBlockNumberNoCheck(&rh->rh_successor);
}

int
minidb_record_nversions(const char *rec, uint32 reclen)
{
	if (reclen >= 1 && minidb_record_format_of(rec) == MINIDB_FORMAT_V3)
		return v3_nversions(rec, reclen);
	if (reclen < sizeof(MinidbRecordHeader))
		return 0;
	return minidb_record_header(rec)->rh_nversions;
}

uint32
minidb_record_reserve(const char *rec, uint32 reclen)
{
	if (reclen >= 1 && minidb_record_format_of(rec) == MINIDB_FORMAT_V3)
		return v3_reserve(rec, reclen);
	return MINIDB_MARKER_GROWTH_MAX;
}

void
minidb_virtual_set_hint(MinidbVersionHeader *vh, uint16 hint)
{
	MinidbVirtualMarker *vm = (MinidbVirtualMarker *) vh;

	Assert(vh->vh_flags & MINIDB_V_VIRTUAL);
	vh->vh_flags |= hint;
	v3_set_end_hint(vm->rec, hint);
}

/*
 * The legacy record with v prepended, converted to V3 (see prepend_ex).
 *
 * A V1/V2 row's end is a marker version at the head, where V3 has none: V3
 * keeps an end only as its header's xmax, above the newest data version.
 * A writer reaches a row whose head is a marker only when that marker's
 * transaction aborted (a committed end fails the write, a running one is
 * waited for), and it prunes the marker before it prepends, as it prunes
 * a V3 record's aborted end.  This layer cannot tell an aborted marker
 * from another, so it relies on that: sizing (out NULL) measures the
 * record the write makes once the marker is pruned, as v3_prepend_newest
 * sizes a V3 record without its aborted end (a writer decides the format
 * and the room before it plans the pruning); a build onto a record that
 * still has one is the caller's bug.
 */
static uint32
legacy_prepend_as_v3(char *out, uint32 outsize, const char *rec,
					 uint32 reclen, const MinidbVersionData *v,
					 const MinidbRecordEnd *extra)
{
	MinidbVersionData *vs;
	MinidbVersionData *all;
	MinidbChainError err;
	MinidbRecordEnd ex;
	MinidbLockers lk;
	ItemPointerData token;
	uint32		spec = minidb_record_spec_token(rec);
	uint32		len;
	int			n;
	int			skip = 0;

	n = minidb_chain_decode_all(rec, reclen, &vs, &err);
	if (n < 0)
		elog(ERROR, "minidb_record_prepend on a damaged record: version %d, field \"%s\": %s",
			 err.version, err.field, err.detail);
	if (n > 0 && (vs[0].flags & MINIDB_V_NODATA_MASK))
	{
		if (out != NULL)
			elog(ERROR, "minidb_record_prepend: a format %d record's end must be pruned before it becomes format 3",
				 minidb_record_format_of(rec));
		skip = 1;
	}
	all = palloc(sizeof(MinidbVersionData) * (n - skip + 1));
	all[0] = *v;
	memcpy(all + 1, vs + skip, sizeof(MinidbVersionData) * (n - skip));
	memset(&ex, 0, sizeof(ex));
	if (extra)
		ex = *extra;
	if (!(v->flags & MINIDB_V_NODATA_MASK))
	{
		/* the lockers stay (unless all ended), and a speculative token */
		legacy_get_lockers(rec, &lk);
		ex.lockers = ex.drop_lockers ? NULL : &lk;
		if (spec != 0)
		{
			ItemPointerSet(&token, spec, MINIDB_SPEC_TOKEN_OFFSET);
			ex.successor = &token;
			ex.spec = true;
		}
	}
	len = v3_from_versions(out, outsize, all, n - skip + 1, &ex, out == NULL);
	pfree(all);
	minidb_chain_free_all(vs, n);
	return len;
}

/*
 * Prepend v as the new newest version of rec, writing the result to out
 * (NULL: only the length), in format (0: rec's own; a V1 or V2 record may
 * become V3, never the reverse).  A marker v ends the row: in V1 and V2 it
 * is a version and extra's successor and moved-partition flag go to the
 * record header; in V3 it is the record's end.
 */
uint32
minidb_record_prepend_ex(char *out, uint32 outsize, const char *rec,
						 uint32 reclen, const MinidbVersionData *v,
						 int format, const MinidbRecordEnd *extra)
{
	int			own = minidb_record_format_of(rec);
	uint32		len;

	if (format == 0)
		format = own;
	if (own == MINIDB_FORMAT_V3)
	{
		if (format != MINIDB_FORMAT_V3)
			elog(ERROR, "minidb_record_prepend: a V3 record cannot become format %d",
				 format);
		return v3_prepend(out, outsize, rec, reclen, v, extra, out == NULL);
	}
	if (format == MINIDB_FORMAT_V3)
		return legacy_prepend_as_v3(out, outsize, rec, reclen, v, extra);
	if (format != own)
		elog(ERROR, "minidb_record_prepend: a format %d record cannot become format %d",
			 own, format);
	len = legacy_prepend(out, outsize, rec, reclen, v);
	if (out != NULL && extra != NULL)
		legacy_apply_extra(minidb_record_header(out), extra);
	return len;
}

/*
 * How many data versions keep[] keeps of rec when they are its newest ones
 * and every older one goes, the row not ended (see v3_kept_newest): what
 * pruning before an UPDATE mostly keeps.  0 otherwise, and for V1 and V2.
 */
int
minidb_record_kept_newest(const char *rec, uint32 reclen, const bool *keep)
{
	if (reclen < 1 || minidb_record_format_of(rec) != MINIDB_FORMAT_V3)
		return 0;
	return v3_kept_newest(rec, reclen, keep);
}

/*
 * minidb_record_prepend_ex of v, in the record's own format (V3), onto the
 * record that minidb_record_prune leaves of rec when keep[] keeps its
 * nnewest newest versions (minidb_record_kept_newest): the same bytes,
 * without building the pruned record first.
 */
uint32
minidb_record_prepend_newest(char *out, uint32 outsize, const char *rec,
							 uint32 reclen, int nnewest,
							 const MinidbVersionData *v,
							 const MinidbRecordEnd *extra)
{
	if (minidb_record_format_of(rec) != MINIDB_FORMAT_V3 || nnewest < 1)
		elog(ERROR, "minidb_record_prepend_newest: %d versions of a format %d record",
			 nnewest, minidb_record_format_of(rec));
	return v3_prepend_newest(out, outsize, rec, reclen, nnewest, v, extra,
							 out == NULL);
}

/*
 * A record of format holding vs[0..n-1], newest first (vs[0] may end the
 * row), with the record-level fields of like: its lockers (when the row
 * has not ended), a speculative token, a moved row's successor.  out NULL:
 * only the length.  For rewrites (CLUSTER, VACUUM FULL, TOAST re-saving).
 */
uint32
minidb_record_from_versions(char *out, uint32 outsize,
							const MinidbVersionData *vs, int n, int format,
							const char *like)
{
	MinidbRecordEnd extra;
	MinidbLockers lk;
	ItemPointerData succ;
	ItemPointerData token;
	bool		moved_part = false;
	bool		end = n > 0 && (vs[0].flags & MINIDB_V_NODATA_MASK);
	uint32		spec = minidb_record_spec_token(like);
	uint32		len;

	memset(&extra, 0, sizeof(extra));
	minidb_record_get_lockers(like, &lk);
	if (!end && TransactionIdIsValid(lk.xid))
		extra.lockers = &lk;
	if (end && minidb_record_get_successor(like, &succ, &moved_part))
		extra.successor = &succ;
	extra.moved_part = end && moved_part;
	if (!end && spec != 0)
	{
		ItemPointerSet(&token, spec, MINIDB_SPEC_TOKEN_OFFSET);
		extra.successor = &token;
		extra.spec = true;
	}
	if (format == MINIDB_FORMAT_V3)
		return v3_from_versions(out, outsize, vs, n, &extra, out == NULL);

	/* V1, V2: oldest first, then the header's fields */
	if (end && n == 1)
		elog(ERROR, "minidb record of format %d without a data version", format);
	if (out == NULL)
		return (uint32) Min(minidb_record_size(vs, n, format), PG_UINT32_MAX);
	len = legacy_build(out, outsize, &vs[n - 1], format, NULL);
	for (int i = n - 2; i >= 0; i--)
		len = legacy_prepend(out, outsize, out, len, &vs[i]);
	if (out)
	{
		if (end)
			extra.lockers = &lk;	/* V1, V2 keep them beside the marker */
		legacy_apply_extra(minidb_record_header(out), &extra);
	}
	return len;
}

/* rec, all of it, in format (for rewrites); out NULL: only the length */
uint32
minidb_record_rewrite_as(char *out, uint32 outsize, const char *rec,
						 uint32 reclen, int format)
{
	MinidbVersionData *vs;
	MinidbChainError err;
	uint32		len;
	int			n = minidb_chain_decode_all(rec, reclen, &vs, &err);

	if (n < 0)
		elog(ERROR, "minidb_record_rewrite_as on a damaged record: version %d, field \"%s\": %s",
			 err.version, err.field, err.detail);
	if (minidb_record_format_of(rec) == MINIDB_FORMAT_V3 && n > 0 &&
		(vs[0].flags & MINIDB_V_XMIN_MULTI) && format != MINIDB_FORMAT_V3)
		elog(ERROR, "minidb record ended by a multixact cannot become format %d",
			 format);
	len = minidb_record_from_versions(out, outsize, vs, n, format, rec);
	minidb_chain_free_all(vs, n);
	return len;
}

uint32
minidb_record_prepend(char *out, uint32 outsize, const char *rec,
					  uint32 reclen, const MinidbVersionData *v)
{
	return minidb_record_prepend_ex(out, outsize, rec, reclen, v, 0, NULL);
}

uint32
minidb_record_prepend_size_ex(const char *rec, uint32 reclen,
							  const MinidbVersionData *v, int format,
							  const MinidbRecordEnd *extra)
{
	return minidb_record_prepend_ex(NULL, 0, rec, reclen, v, format, extra);
}

/* Exact length of rec (valid, reclen bytes) once v is prepended */
uint32
minidb_record_prepend_size_rec(const char *rec, uint32 reclen,
							   const MinidbVersionData *v)
{
	return minidb_record_prepend_ex(NULL, 0, rec, reclen, v, 0, NULL);
}

/*
 * An upper bound of the length of a record of reclen bytes once v is
 * prepended in its own format, whatever that is: the new version and its
 * padding, a directory or trailer entry, and the old head's padding when
 * it is stored again.  minidb_record_prepend_size_ex is exact.
 */
uint32
minidb_record_prepend_size(uint32 reclen, const MinidbVersionData *v)
{
	return reclen + MAXALIGN(checked_version_size(v)) + 4 * MAXIMUM_ALIGNOF;
}

/*
 * Remove, in place, every version i with keep[i] false; keep has
 * minidb_record_nversions entries.  Returns the new length, or 0 when no
 * version is kept (the caller removes the record; its bytes are then
 * unspecified).  The record keeps its format.  rec must be valid: a damaged
 * record here is a caller's bug.  A V3 version stored as a difference from
 * one that goes is stored whole; removing a version and making its older
 * neighbour whole never takes more room than the two took (the neighbour
 * shares at most the removed version's bytes), but pruning versions from
 * the middle of a chain might: minidb_record_prune_fits tells.
 */
uint32
minidb_record_prune(char *rec, uint32 reclen, const bool *keep)
{
	if (minidb_record_format_of(rec) == MINIDB_FORMAT_V3)
		return v3_prune(rec, reclen, keep, false);
	return legacy_prune(rec, reclen, keep);
}

bool
minidb_record_prune_fits(const char *rec, uint32 reclen, const bool *keep)
{
	if (minidb_record_format_of(rec) != MINIDB_FORMAT_V3)
		return true;
	return v3_prune((char *) rec, reclen, keep, true) <= reclen;
}

uint32
minidb_record_set_lockers(char *out, uint32 outsize, const char *rec,
						  uint32 reclen, const MinidbLockers *lk)
{
	MinidbRecordEnd extra;

	if (minidb_record_format_of(rec) == MINIDB_FORMAT_V3)
		return v3_set_lockers(out, outsize, rec, reclen, lk, out == NULL);
	if (out == NULL)
		return reclen;
	if (outsize < reclen)
		elog(ERROR, "minidb_record_set_lockers: output buffer too small");
	if (out != rec)
		memmove(out, rec, reclen);
	memset(&extra, 0, sizeof(extra));
	extra.lockers = lk;
	legacy_apply_extra(minidb_record_header(out), &extra);
	return reclen;
}

uint32
minidb_record_set_lockers_size(const char *rec, uint32 reclen,
							   const MinidbLockers *lk)
{
	return minidb_record_set_lockers(NULL, 0, rec, reclen, lk);
}

void
minidb_record_set_end_xid(char *rec, uint32 reclen, TransactionId xid)
{
	if (minidb_record_format_of(rec) != MINIDB_FORMAT_V3)
		elog(ERROR, "minidb_record_set_end_xid on a format %d record",
			 minidb_record_format_of(rec));
	v3_set_end_xid(rec, reclen, xid);
}

void
minidb_record_clear_spec(char *rec, uint32 reclen)
{
	if (minidb_record_format_of(rec) == MINIDB_FORMAT_V3)
		v3_clear_spec(rec, reclen);
	else
		ItemPointerSetInvalid(&minidb_record_header(rec)->rh_successor);
}

void
minidb_record_patch_successor(char *rec, uint32 reclen,
							  const ItemPointerData *succ)
{
	if (minidb_record_format_of(rec) == MINIDB_FORMAT_V3)
		v3_patch_successor(rec, reclen, succ);
	else
		minidb_record_header(rec)->rh_successor = *succ;
}

uint32
minidb_record_forget_successor(char *rec, uint32 reclen)
{
	MinidbRecordHeader *rh;
	MinidbVersionHeaderV1 *head;

	if (minidb_record_format_of(rec) == MINIDB_FORMAT_V3)
		return v3_forget_successor(rec, reclen);
	rh = minidb_record_header(rec);
	head = (MinidbVersionHeaderV1 *) (rec + (rh->rh_format == MINIDB_FORMAT_V2 ?
											 minidb_record_dir(rec)[0] :
											 MINIDB_RECORD_HDRSZ));
	if (head->vh_flags & MINIDB_V_MOVED)
		head->vh_flags = (head->vh_flags &
						  ~(MINIDB_V_MOVED | MINIDB_V_KEYS_UPDATED)) |
			MINIDB_V_TOMBSTONE;
	rh->rh_flags &= ~MINIDB_REC_MOVED_PART;
	ItemPointerSetInvalid(&rh->rh_successor);
	return reclen;
}

void
minidb_version_rebuild(const char *rec, const MinidbVersionRef *ref,
					   MinidbVersionData *out, MinidbDeltaBuf *buf)
{
	if (minidb_record_format_of(rec) != MINIDB_FORMAT_V3)
		elog(ERROR, "minidb version %d of a format %d record is not a difference",
			 ref->index, minidb_record_format_of(rec));
	v3_rebuild(rec, ref, out, buf);
}


/* ----------------------------------------------------------------
 *		The reference walker: eager, obvious, slow
 * ----------------------------------------------------------------
 */

/*
 * Validate rec, then decode every version into a palloc'd array, copying
 * each version's bitmap and data.  Returns the number of versions, or -1
 * with *err filled in when the record is damaged.
 */
int
minidb_chain_decode_all(const char *rec, uint32 reclen,
						MinidbVersionData **versions, MinidbChainError *err)
{
	MinidbVersionData *out;
	uint32		end = MINIDB_RECORD_HDRSZ;
	int			n;
	int			i;

	*versions = NULL;
	if (reclen >= 1 && minidb_record_format_of(rec) == MINIDB_FORMAT_V3)
		return v3_decode_all(rec, reclen, versions, err);
	if (!minidb_record_validate(rec, reclen, err))
		return -1;

	n = minidb_record_header(rec)->rh_nversions;
	out = palloc0(sizeof(MinidbVersionData) * n);
	for (i = 0; i < n; i++)
	{
		/* V1: right after the previous version; V2: where dir[] says */
		uint32		offset =
			minidb_record_header(rec)->rh_format == MINIDB_FORMAT_V2 ?
			minidb_record_dir(rec)[i] : MAXALIGN(end);
		const MinidbVersionHeaderV1 *vh = version_at(rec, offset);
		uint32		datalen = vh->vh_len - vh->vh_hoff;
		char	   *data;

		out[i].xmin = vh->vh_xmin;
		out[i].cid = vh->vh_cid;
		out[i].flags = vh->vh_flags;
		out[i].natts = vh->vh_natts;
		if (vh->vh_flags & MINIDB_V_HASNULL)
		{
			bits8	   *bitmap = palloc(MINIDB_BITMAPLEN(vh->vh_natts));

			memcpy(bitmap, rec + offset + MINIDB_V1_VERSION_HDRSZ,
				   MINIDB_BITMAPLEN(vh->vh_natts));
			out[i].bitmap = bitmap;
		}
		/* palloc'd even when empty, so data is never NULL; MAXALIGNed */
		data = palloc(Max(datalen, 1));
		memcpy(data, rec + offset + vh->vh_hoff, datalen);
		out[i].data = data;
		out[i].datalen = datalen;
		end = offset + vh->vh_len;
	}
	*versions = out;
	return n;
}

/*
 * Apply the visibility predicate to decoded versions, newest first.  The
 * predicate sees a header rebuilt from the decoded version, so hint bits it
 * sets there are lost: this is the oracle, not the read path.
 */
int
minidb_chain_pick_visible(MinidbVersionData *versions, int n,
						  MinidbVisibleFn visible, void *arg)
{
	int			i;

	for (i = 0; i < n; i++)
	{
		MinidbVersionHeader vh;

		memset(&vh, 0, sizeof(vh));
		vh.vh_xmin = versions[i].xmin;
		vh.vh_cid = versions[i].cid;
		vh.vh_flags = versions[i].flags & ~MINIDB_V_VIRTUAL;
		vh.vh_natts = versions[i].natts;
		if ((vh.vh_flags & MINIDB_V_XMIN_MULTI) && minidb_multi_updater_hook)
		{
			vh.vh_xmin = minidb_multi_updater_hook(versions[i].xmin, NULL);
			if (!TransactionIdIsValid(vh.vh_xmin))
			{
				vh.vh_xmin = versions[i].xmin;
				vh.vh_flags = (vh.vh_flags & ~MINIDB_V_XMIN_COMMITTED) |
					MINIDB_V_XMIN_ABORTED;
			}
		}
		if (visible(&vh, i, arg))
			return i;
	}
	return -1;
}

void
minidb_chain_free_all(MinidbVersionData *versions, int n)
{
	int			i;

	if (versions == NULL)
		return;
	for (i = 0; i < n; i++)
	{
		if (versions[i].bitmap)
			pfree((void *) versions[i].bitmap);
		if (versions[i].data)
			pfree((void *) versions[i].data);
	}
	pfree(versions);
}

/*
 * Do a and b describe the same version: the same header fields (every flag
 * bit, the encoding and the hint bits included), the same null bitmap and
 * the same data bytes?  Where the bytes live does not matter.
 */
bool
minidb_version_equal(const MinidbVersionData *a, const MinidbVersionData *b)
{
	if (a->xmin != b->xmin || a->cid != b->cid || a->flags != b->flags ||
		a->natts != b->natts || a->datalen != b->datalen)
		return false;
	if ((a->bitmap == NULL) != (b->bitmap == NULL))
		return false;
	if (a->bitmap &&
		memcmp(a->bitmap, b->bitmap, MINIDB_BITMAPLEN(a->natts)) != 0)
		return false;
	return a->datalen == 0 || memcmp(a->data, b->data, a->datalen) == 0;
}


/* ----------------------------------------------------------------
 *		The fast walker
 * ----------------------------------------------------------------
 */

bool
minidb_chain_iter_init(MinidbChainIter *it, char *rec, uint32 reclen,
					   MinidbChainError *err)
{
	it->rec = rec;
	it->reclen = reclen;
	it->offset = MINIDB_RECORD_HDRSZ;
	it->index = 0;
	it->nversions = -1;			/* damaged until the header checks out */
	it->format = 0;
	if (reclen >= 1 && minidb_record_format_of(rec) == MINIDB_FORMAT_V3)
	{
		it->format = MINIDB_FORMAT_V3;
		if (!v3_iter_init(it, err))
		{
			it->nversions = -1;
			return false;
		}
		return true;
	}
	if (!check_record_header(rec, reclen, err))
		return false;
	it->format = minidb_record_header(rec)->rh_format;
	if (it->format == MINIDB_FORMAT_V2)
	{
		if (!check_dir_head(rec, err))
			return false;
		it->offset = minidb_record_dir(rec)[0];
	}
	it->nversions = minidb_record_header(rec)->rh_nversions;
	return true;
}

/*
 * Step to the next version.  Returns true with *ref filled in; false at the
 * end of the chain (after the tail check) or on damage.  *damaged tells the
 * two apart.  Inlined into the fast walker so that the iterator's state
 * stays in registers.
 */
static pg_attribute_always_inline bool
chain_step(MinidbChainIter *it, MinidbVersionRef *ref,
		   MinidbChainError *err, bool *damaged)
{
	uint32		offset;

	*damaged = false;
	if (unlikely(it->nversions < 0))
	{
		/* damage was reported by an earlier call */
		*damaged = true;
		return false;
	}
	if (it->format == MINIDB_FORMAT_V2)
	{
		/* it->offset is dir[index], checked by the previous step */
		if (it->index >= it->nversions)
			return false;		/* the last step checked the tail */
		offset = it->offset;
		if (unlikely(!check_version(it->rec, it->reclen, it->index, offset,
									err) ||
					 !check_link(it->rec, it->reclen, it->index, offset,
								 &it->offset, err)))
		{
			*damaged = true;
			it->nversions = -1;
			return false;
		}
		fill_ref_v1(it->rec, it->reclen, it->index, offset, ref);
		it->index++;
		return true;
	}
	if (it->format == MINIDB_FORMAT_V3)
		return v3_iter_next(it, ref, err, damaged);
	if (it->index >= it->nversions)
	{
		if (it->nversions > 0 &&
			!check_tail(it->offset, it->reclen, it->nversions - 1, err))
			*damaged = true;
		return false;
	}

	offset = MAXALIGN(it->offset);
	if (unlikely(!check_version(it->rec, it->reclen, it->index, offset, err)))
	{
		*damaged = true;
		it->nversions = -1;		/* stay damaged */
		return false;
	}
	fill_ref_v1(it->rec, it->reclen, it->index, offset, ref);
	it->offset = ref->end;
	it->index++;
	return true;
}

bool
minidb_chain_iter_next(MinidbChainIter *it, MinidbVersionRef *ref,
					   MinidbChainError *err, bool *damaged)
{
	return chain_step(it, ref, err, damaged);
}

/*
 * The fast walker: the index of the newest version the predicate accepts
 * (*ref then locates it), -1 when none does, -2 when the record is damaged.
 * It always walks to the end and checks the tail, even after a hit, so a
 * damaged record fails on every read, not only on reads that reach the
 * damage.
 */
/*
 * V2: the record header and dir[0] have been checked (iter_init).  Then
 * the versions the
 * predicate is asked about, each in full with its link to the next
 * directory entry, newest first; after a hit before the last version, the
 * last version alone (the tail check without a walk).
 */
static pg_attribute_always_inline int
find_visible_v2_from(char *rec, uint32 reclen, MinidbVisibleFn visible,
					 void *arg, MinidbVersionRef *ref, MinidbChainError *err,
					 int from, uint32 offset)
{
	int			n = minidb_record_header(rec)->rh_nversions;
	int			i;

	for (i = from; i < n; i++)
	{
		MinidbVersionHeader *vh = (MinidbVersionHeader *) (rec + offset);
		uint32		next;

		if (unlikely(!check_version(rec, reclen, i, offset, err) ||
					 !check_link(rec, reclen, i, offset, &next, err)))
			return -2;
		if (visible(vh, i, arg))
		{
			if (ref)
				fill_ref_v1(rec, reclen, i, offset, ref);
#if defined(MINIDB_PLANT_EARLY_EXIT) || defined(MINIDB_PLANT_EARLY_EXIT_V2)
			/* planted bug for the fuzzer's self-check: skips the tail */
			return i;
#endif
			if (i < n - 1 && unlikely(!check_last_v2(rec, reclen, err)))
				return -2;
			return i;
		}
		offset = next;
	}
	return -1;
}

static pg_attribute_always_inline int
find_visible_v2(char *rec, uint32 reclen, MinidbVisibleFn visible,
				void *arg, MinidbVersionRef *ref, MinidbChainError *err)
{
	/* dir[0] was checked with the header */
	return find_visible_v2_from(rec, reclen, visible, arg, ref, err, 0,
								minidb_record_dir(rec)[0]);
}

/*
 * V2: version i (1 <= i < n), reached through its directory entry alone,
 * for the search below: its offset sane (MAXALIGNed, past the room i
 * minimal versions need), the version checked in full with its link to
 * the next entry (or the record's end).  False when anything is off: the
 * search then leaves the version to the walk, which reports the damage
 * as it always did.  *next gets the next version's offset.
 */
static pg_attribute_always_inline bool
probe_v2(char *rec, uint32 reclen, int i, uint32 *offset, uint32 *next)
{
	int			n = minidb_record_header(rec)->rh_nversions;
	MinidbChainError scratch;

	*offset = minidb_record_dir(rec)[i];
	if (*offset != MAXALIGN(*offset) ||
		*offset < MINIDB_V2_DATA_START(n) +
		(uint32) i * MAXALIGN(MINIDB_V1_VERSION_HDRSZ))
		return false;
	return check_version(rec, reclen, i, *offset, &scratch) &&
		check_link(rec, reclen, i, *offset, next, &scratch);
}

/*
 * V2, the search of minidb_chain_find_visible_ordered past version 0
 * (which the caller visited; next is dir[1], checked by its link), over
 * versions 1..n-1 (MINIDB_NEXT_PROBE), asking settled() about settled
 * probes.  Invariant: every version above lo is invisible, version hi
 * (n: none) is visible.  A probe that is not settled, or not plainly
 * sound, ends the search: the walk goes on from lo.
 */
static pg_noinline int
search_v2(char *rec, uint32 reclen, MinidbVisibleFn visible,
		  MinidbVisibleFn settled, void *arg, MinidbVersionRef *ref,
		  MinidbChainError *err, uint32 next)
{
	int			n = minidb_record_header(rec)->rh_nversions;
	int			lo = 1;
	int			hi = n;
	bool		lo_probed = false;	/* version lo-1 was a probe */
	int			d = 1;			/* galloping: the next probe is n - d */

	while (lo < hi)
	{
		int			mid = MINIDB_NEXT_PROBE(lo, hi, n, d);
		uint32		moff;
		uint32		mnext;
		MinidbVersionHeader *vh;

		if (!probe_v2(rec, reclen, mid, &moff, &mnext))
			break;
		vh = (MinidbVersionHeader *) (rec + moff);
		if (!MINIDB_VERSION_SETTLED(vh->vh_flags))
			break;
		if (settled(vh, mid, arg))
		{
			hi = mid;
			d *= 2;
		}
		else
		{
			lo = mid + 1;
			d = 0;				/* bracketed: bisect */
			lo_probed = true;
			next = mnext;		/* dir[lo], checked by the probe's link */
		}
	}
	if (lo_probed)
	{
		/* the version above lo, asked as the walk would ask it last */
		uint32		aoff = minidb_record_dir(rec)[lo - 1];	/* probed */

		if (visible((MinidbVersionHeader *) (rec + aoff), lo - 1, arg))
		{
			/* settled() said no: keep to what visible() says */
			if (ref)
				fill_ref_v1(rec, reclen, lo - 1, aoff, ref);
			if (unlikely(!check_last_v2(rec, reclen, err)))
				return -2;
			return lo - 1;
		}
	}
	if (lo == hi && hi < n)
	{
		/* converged on a probe settled() accepted: the hit */
		if (ref)
			fill_ref_v1(rec, reclen, hi, minidb_record_dir(rec)[hi], ref);
		if (hi < n - 1 && unlikely(!check_last_v2(rec, reclen, err)))
			return -2;
		return hi;
	}
	if (lo >= n)
		return -1;				/* the last version was probed: tail checked */
	/* the search stopped at a probe it could not use: walk from lo */
	return find_visible_v2_from(rec, reclen, visible, arg, ref, err, lo,
								next);
}

/*
 * Version 0 as the walk visits it; the search (out of line: most reads
 * stop at version 0) for the rest.
 */
static pg_attribute_always_inline int
find_visible_v2_ordered(char *rec, uint32 reclen, MinidbVisibleFn visible,
						MinidbVisibleFn settled, void *arg,
						MinidbVersionRef *ref, MinidbChainError *err)
{
	int			n = minidb_record_header(rec)->rh_nversions;
	uint32		offset = minidb_record_dir(rec)[0];	/* checked */
	uint32		next;

	if (unlikely(!check_version(rec, reclen, 0, offset, err) ||
				 !check_link(rec, reclen, 0, offset, &next, err)))
		return -2;
	if (visible((MinidbVersionHeader *) (rec + offset), 0, arg))
	{
		if (ref)
			fill_ref_v1(rec, reclen, 0, offset, ref);
		if (n > 1 && unlikely(!check_last_v2(rec, reclen, err)))
			return -2;
		return 0;
	}
	if (n - 1 <= MINIDB_SEARCH_MIN)
		return find_visible_v2_from(rec, reclen, visible, arg, ref, err, 1,
									next);
	return search_v2(rec, reclen, visible, settled, arg, ref, err, next);
}

int
minidb_chain_find_visible_ordered(char *rec, uint32 reclen,
								  MinidbVisibleFn visible,
								  MinidbVisibleFn settled, void *arg,
								  MinidbVersionRef *ref,
								  MinidbChainError *err)
{
	if (settled == NULL || reclen < 1)
		return minidb_chain_find_visible(rec, reclen, visible, arg, ref, err);
	if (minidb_record_format_of(rec) == MINIDB_FORMAT_V3)
		return v3_find_visible_ordered(rec, reclen, visible, settled, arg,
									   ref, err);
	if (minidb_record_format_of(rec) == MINIDB_FORMAT_V2)
	{
		if (!check_record_header(rec, reclen, err) ||
			!check_dir_head(rec, err))
			return -2;
		return find_visible_v2_ordered(rec, reclen, visible, settled, arg,
									   ref, err);
	}
	/* V1 walks to the tail on every read: nothing to gain */
	return minidb_chain_find_visible(rec, reclen, visible, arg, ref, err);
}

int
minidb_chain_find_visible(char *rec, uint32 reclen, MinidbVisibleFn visible,
						  void *arg, MinidbVersionRef *ref,
						  MinidbChainError *err)
{
	MinidbChainIter it;
	MinidbVersionRef cur;
	int			found = -1;
	bool		damaged;

	if (reclen >= 1 && minidb_record_format_of(rec) == MINIDB_FORMAT_V3)
		return v3_find_visible(rec, reclen, visible, arg, ref, err);
	if (!minidb_chain_iter_init(&it, rec, reclen, err))
		return -2;
	if (it.format == MINIDB_FORMAT_V2)
		return find_visible_v2(rec, reclen, visible, arg, ref, err);
	while (chain_step(&it, &cur, err, &damaged))
	{
		if (found < 0 && visible(cur.vh, cur.index, arg))
		{
			found = cur.index;
			if (ref)
				minidb_ref_copy(ref, &cur);
#ifdef MINIDB_PLANT_EARLY_EXIT
			/* planted bug for the fuzzer's self-check: skips the tail */
			return found;
#endif
		}
	}
	return damaged ? -2 : found;
}

