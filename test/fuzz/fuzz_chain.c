/*-------------------------------------------------------------------------
 *
 * fuzz_chain.c
 *	  libFuzzer target for chain.c and chain_v3.c: a differential harness
 *	  that holds the fast walker to the reference walker, in every record
 *	  format.
 *
 * Input: byte 0 picks the mode, bytes 1..8 seed the visibility predicates,
 * the rest is the payload.  Byte 0's bit 4 installs a MultiXactId updater
 * hook (minidb_multi_updater_hook) while the walkers are compared, as the
 * server does; without it a V3 end by a multixact shows the multixact.
 *
 *	raw mode (byte 0 even): the payload is a record of any format, copied
 *	  into a buffer of exactly its length (so AddressSanitizer flags any
 *	  read past it).
 *	structured mode (byte 0 odd): the payload is a small program that
 *	  builds a valid chain, checked against a model, and then optionally
 *	  damages it (see damage_record).  Bits 1-2 of byte 0 pick the program:
 *	  0: V1 and V2 side by side, V1 damaged and checked;
 *	  1: the same, V2 damaged and checked;
 *	  2, 3: a V3 program (run_program_v3): builds, DELTA-encoded updates,
 *		the row's end (tombstone, move, move to another partition, by an
 *		xid or a multixact, combo cid), lockers, speculative tokens, prunes
 *		the server makes and arbitrary ones (minidb_record_prune_fits must
 *		be honest), and conversions of V1/V2 records to V3, the record
 *		checked against the model after every step.
 *
 * On every record, damaged or not:
 *	- validate, the reference walker and the iterator must agree on whether
 *	  it is damaged and on the error (version, field, detail);
 *	- V1: so must the fast walker, for every predicate;
 *	- V2 and V3: the fast walker checks the record header, the versions it
 *	  asks the predicate about (V3: and data version 0, whose cid a row's
 *	  end reads), and the last version (chain.h, "What a read checks").  On
 *	  a damaged record it must either report validate's error, or report
 *	  damage at the last version while validate's (first) error lies in a
 *	  version it did not visit; and if it accepts the record, validate's
 *	  error must lie in a version it did not visit and that is not the
 *	  last -- except, in V3, a DELTA version whose prefix and suffix exceed
 *	  its newer neighbour's data (field r3_delta): only a walker that
 *	  visits the neighbour knows its length, so the last version's bound
 *	  is checked by the readers that reach it.  The version the fast walker
 *	  returns must equal what the iterator yields for that index before it
 *	  reaches the damage;
 *	- on a valid record, every version the iterator yields (DELTA versions
 *	  rebuilt with minidb_version_get_buf) equals what the reference walker
 *	  decoded, and for every visibility cut (sees nothing, sees the oldest
 *	  k, with "aborted" and "in progress" versions sprinkled in from the
 *	  seed bytes, and an xid-horizon predicate) the fast walker returns the
 *	  same version as the reference walker, with the same bytes, and asks
 *	  the predicate about the same versions in the same order;
 *	- a version stored as a difference that the fast walker returns is
 *	  rebuilt alike into the shared buffer, into a one-byte buffer that
 *	  must grow (v3_rebuild's one pass) and with no buffer at all;
 *	- V1, on a damaged record: the fast walker returns -2 for every
 *	  predicate, even when it found a visible version before the damage
 *	  (tail check).  V2, V3: a damaged tail fails every predicate too.
 * A disagreement prints "MINIDB-DIFF-MISMATCH" and aborts; make plantedbug
 * relies on that marker.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres_fe.h"

#include <time.h>
#include <sanitizer/allocator_interface.h>

#include "chain_shim.h"
#include "access/transam.h"
#include "chain.h"

#define MAX_PROGRAM_VERSIONS	200

static struct timespec fuzz_start;
static long fuzz_execs = 0;

/* Byte 0's bit 4: the walkers are compared with the multixact hook on */
static bool hook_wanted = false;

/* Scratch buffers for DELTA rebuilds; reused for the whole run */
static MinidbDeltaBuf buf_a = {NULL, 0};
static MinidbDeltaBuf buf_b = {NULL, 0};

static void mismatch(const char *fmt,...) pg_attribute_printf(1, 2);

static void
mismatch(const char *fmt,...)
{
	va_list		ap;
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	fprintf(stderr, "MINIDB-DIFF-MISMATCH after %.3f s and %ld inputs: ",
			(now.tv_sec - fuzz_start.tv_sec) +
			(now.tv_nsec - fuzz_start.tv_nsec) / 1e9, fuzz_execs);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	abort();
}

/* ---- what an elog(ERROR) leaves behind ---- */

/*
 * In the server an elog(ERROR) resets the memory context, freeing what the
 * failed call palloc'd.  The shim's palloc is malloc, so a refusal the
 * harness provokes on purpose (minidb_record_prune of a record it would
 * grow) would leak, and LeakSanitizer would stop the run.  While such a
 * call runs, the malloc hooks record its allocations; after a caught
 * elog(ERROR) the ones still live are freed, as a context reset would.
 */
#define MAX_TRACKED		1024
static volatile bool tracking = false;
static const volatile void *tracked[MAX_TRACKED];
static int	ntracked = 0;

static void
track_malloc(const volatile void *ptr, size_t size)
{
	if (tracking && ntracked < MAX_TRACKED)
		tracked[ntracked++] = ptr;
}

static void
track_free(const volatile void *ptr)
{
	if (!tracking)
		return;
	for (int i = ntracked - 1; i >= 0; i--)
		if (tracked[i] == ptr)
		{
			tracked[i] = tracked[--ntracked];
			return;
		}
}

static void
track_begin(void)
{
	ntracked = 0;
	tracking = true;
}

/* After the call: free what it left when it raised an error */
static void
track_end(bool caught)
{
	int			n;
	const volatile void *left[MAX_TRACKED];

	tracking = false;
	n = ntracked;
	if (n >= MAX_TRACKED)
		mismatch("an elog(ERROR) path allocated more than %d blocks", MAX_TRACKED);
	memcpy(left, (const void *) tracked, sizeof(left[0]) * n);
	ntracked = 0;
	if (caught)
		for (int i = 0; i < n; i++)
			free((void *) left[i]);
}

/* ---- the multixact hook ---- */

/*
 * The server resolves a MultiXactId to its updating member; some have none
 * left (the updater aborted and the lockers are all that remain).
 */
static TransactionId
fuzz_multi_updater(TransactionId multi, const char *rec)
{
	if (multi % 4 == 0)
		return InvalidTransactionId;
	return FirstNormalTransactionId + 100000 + multi;
}

/*
 * A decoded version as a reader sees it (what minidb_chain_pick_visible
 * hands the predicate, VIRTUAL aside): a V3 end by a multixact shows its
 * updater when the hook is on.
 */
static MinidbVersionData
reader_view(const MinidbVersionData *d)
{
	MinidbVersionData v = *d;

	if ((v.flags & MINIDB_V_XMIN_MULTI) && minidb_multi_updater_hook)
	{
		TransactionId upd = minidb_multi_updater_hook(v.xmin, NULL);

		if (TransactionIdIsValid(upd))
			v.xmin = upd;
		else
			v.flags = (v.flags & ~MINIDB_V_XMIN_COMMITTED) |
				MINIDB_V_XMIN_ABORTED;
	}
	return v;
}

/* ---- visibility predicates ---- */

typedef struct Predicate
{
	int			kind;			/* 0: oldest k; 1: xid horizon */
	int			nversions;
	int			oldest_k;
	uint64		aborted;		/* bit index%64: skip (aborted) */
	uint64		inprogress;		/* bit index%64: skip (in progress) */
	TransactionId horizon;		/* kind 1: xmin < horizon is visible */
	/* call log, to compare the order of questions */
	int			ncalls;
	int			calls[64];
} Predicate;

static bool
predicate(MinidbVersionHeader *vh, int index, void *arg)
{
	Predicate  *p = (Predicate *) arg;
	uint64		bit = UINT64CONST(1) << (index % 64);

	if (p->ncalls < lengthof(p->calls))
		p->calls[p->ncalls] = index;
	p->ncalls++;
	if (p->kind == 0)
	{
		if ((p->aborted | p->inprogress) & bit)
			return false;
		return index >= p->nversions - p->oldest_k;
	}
	/* xid horizon, in the style of an MVCC snapshot */
	if (vh->vh_flags & MINIDB_V_XMIN_ABORTED)
		return false;
	if (p->inprogress & (UINT64CONST(1) << (vh->vh_xmin % 64)))
		return false;
	if (vh->vh_flags & MINIDB_V_FROZEN)
		return true;
	return vh->vh_xmin < p->horizon;
}

static bool
same_error(const MinidbChainError *a, const MinidbChainError *b)
{
	return a->version == b->version && strcmp(a->field, b->field) == 0 &&
		strcmp(a->detail, b->detail) == 0;
}

static inline bool
is_virtual(const MinidbVersionRef *ref)
{
	return ref->vh == &ref->virt.vh;
}

/* V3: does the record's header say that its end is a virtual marker 0? */
static bool
v3_has_end(const char *rec, uint32 len)
{
	return len >= MINIDB_R3_INFO_PREFIX &&
		((uint8) rec[0] & MINIDB_R3_XMAX) &&
		!((uint8) rec[1] & MINIDB_R3X_LOCK_ONLY);
}

/*
 * Version k as the iterator yields it, into *out (DELTA versions rebuilt
 * into buf_b); false when the iterator reports damage before it.
 */
static bool
iter_version_at(char *rec, uint32 len, int k, MinidbVersionData *out)
{
	MinidbChainIter it;
	MinidbVersionRef ref;
	MinidbChainError err;
	bool		damaged;

	if (!minidb_chain_iter_init(&it, rec, len, &err))
		return false;
	while (minidb_chain_iter_next(&it, &ref, &err, &damaged))
	{
		if (ref.index == k)
		{
			minidb_version_get_buf(rec, &ref, out, &buf_b);
			return true;
		}
	}
	return false;
}

/*
 * The fast walker accepted version fast of a damaged record: it must be
 * the iterator's version fast, reached before the damage.
 */
static void
check_accepted(char *rec, uint32 len, int fast, int visited,
			   MinidbVersionRef *ref, const char *what)
{
	MinidbVersionData fv;
	MinidbVersionData iv;

	if (fast != visited - 1 || ref->index != fast ||
		(!is_virtual(ref) && (char *) ref->vh != rec + ref->offset))
		mismatch("%s: fast walker's ref of version %d is inconsistent (%d questions)",
				 what, fast, visited);
	minidb_version_get_buf(rec, ref, &fv, &buf_a);
	if (!iter_version_at(rec, len, fast, &iv))
		mismatch("%s: fast walker accepted version %d of a damaged record, which the iterator does not reach",
				 what, fast);
	if (!minidb_version_equal(&fv, &iv))
		mismatch("%s: version %d the fast walker returned differs from the iterator's",
				 what, fast);
}

/* Run one predicate through both walkers and compare */
static void
compare_walkers(char *rec, uint32 len, bool valid,
				const MinidbChainError *verr,
				MinidbVersionData *vs, int n, Predicate *pred)
{
	Predicate	fp = *pred;
	Predicate	rp = *pred;
	MinidbVersionRef ref;
	MinidbChainError ferr;
	int			fast = minidb_chain_find_visible(rec, len, predicate, &fp, &ref, &ferr);
	int			format = len >= 1 ? minidb_record_format_of(rec) : 0;
	int			slow;

	if (!valid && format == MINIDB_FORMAT_V2 && verr->version >= 0)
	{
		/* V2: the header checked out (validate's error is in a version) */
		int			last = minidb_record_header(rec)->rh_nversions - 1;
		int			visited = fp.ncalls;

		if (fast == -2)
		{
			if (same_error(&ferr, verr))
				return;
			if (ferr.version != last || verr->version < visited ||
				verr->version >= last)
				mismatch("v2: fast walker reports version %d field %s (%s) after %d questions, validate version %d field %s (%s), last version %d",
						 ferr.version, ferr.field, ferr.detail, visited,
						 verr->version, verr->field, verr->detail, last);
			return;
		}
		if (verr->version < visited || verr->version >= last)
			mismatch("v2: damaged record (version %d, field %s: %s; last version %d) but fast walker returned %d after %d questions",
					 verr->version, verr->field, verr->detail, last, fast,
					 visited);
		if (fast >= 0)
			check_accepted(rec, len, fast, visited, &ref, "v2");
		return;
	}
	if (!valid && format == MINIDB_FORMAT_V3 && verr->version >= 0)
	{
		/*
		 * V3: the header checked out.  The fast walker checked the versions
		 * it asked about, and data version 0 (index 1) before asking about
		 * a row's end; after a hit, the last version without the prefix and
		 * suffix bound (it did not visit the newer neighbour).
		 */
		int			nv = minidb_record_nversions(rec, len);
		int			last = nv - 1;
		int			visited = fp.ncalls;
		int			checked = visited;
		bool		last_bound = verr->version == last &&
			strcmp(verr->field, "r3_delta") == 0 &&
			strncmp(verr->detail, "prefix ", 7) == 0;

		if (v3_has_end(rec, len) && nv >= 2)
			checked = Max(checked, 2);
		if (fast == -2)
		{
			if (same_error(&ferr, verr))
				return;
			/*
			 * Only check_last may disagree, on a version it reached without
			 * the walk: a later one than validate's, or the last one itself
			 * with the bound validate knows and it does not (both r3_delta).
			 */
			if (ferr.version != last || verr->version < checked ||
				(verr->version == last &&
				 (strcmp(verr->field, "r3_delta") != 0 ||
				  strcmp(ferr.field, "r3_delta") != 0)))
				mismatch("v3: fast walker reports version %d field %s (%s) after %d questions, validate version %d field %s (%s), last version %d",
						 ferr.version, ferr.field, ferr.detail, visited,
						 verr->version, verr->field, verr->detail, last);
			return;
		}
		if (verr->version < checked || (verr->version >= last && !last_bound))
			mismatch("v3: damaged record (version %d, field %s: %s; last version %d) but fast walker returned %d after %d questions",
					 verr->version, verr->field, verr->detail, last, fast,
					 visited);
		if (fast >= 0)
			check_accepted(rec, len, fast, visited, &ref, "v3");
		return;
	}
	if (!valid)
	{
		if (fast != -2)
			mismatch("damaged record (version %d, field %s: %s) but fast walker returned %d",
					 verr->version, verr->field, verr->detail, fast);
		if (!same_error(&ferr, verr))
			mismatch("fast walker reports version %d field %s (%s), validate version %d field %s (%s)",
					 ferr.version, ferr.field, ferr.detail,
					 verr->version, verr->field, verr->detail);
		return;
	}

	slow = minidb_chain_pick_visible(vs, n, predicate, &rp);
	if (fast != slow)
		mismatch("fast walker picked %d, reference %d (format %d, kind %d, k %d, n %d)",
				 fast, slow, format, pred->kind, pred->oldest_k, n);
	if (fp.ncalls != rp.ncalls ||
		memcmp(fp.calls, rp.calls,
			   sizeof(int) * Min(fp.ncalls, lengthof(fp.calls))) != 0)
		mismatch("walkers asked the predicate different questions (%d vs %d calls)",
				 fp.ncalls, rp.ncalls);
	if (fast >= 0)
	{
		MinidbVersionData fv;
		MinidbVersionData want = reader_view(&vs[fast]);

		if (ref.index != fast || ref.reclen != len ||
			(is_virtual(&ref) ? fast != 0 || format != MINIDB_FORMAT_V3 :
			 (char *) ref.vh != rec + ref.offset))
			mismatch("fast walker's ref is inconsistent");
		minidb_version_get_buf(rec, &ref, &fv, &buf_a);
		if (!minidb_version_equal(&fv, &want))
			mismatch("visible version %d differs between walkers", fast);
		if ((ref.vh->vh_flags & MINIDB_V_ENC_MASK) == MINIDB_V_ENC_FULL &&
			fv.data != rec + ref.dataoff)
			mismatch("a whole version is not read in place");
		if ((ref.vh->vh_flags & MINIDB_V_ENC_MASK) == MINIDB_V_ENC_DELTA)
		{
			/* rebuilt with no buffer, and into one that must grow */
			MinidbDeltaBuf tiny = {palloc(1), 1};

			minidb_version_get_buf(rec, &ref, &fv, NULL);
			if (!minidb_version_equal(&fv, &want))
				mismatch("version %d rebuilt into a fresh buffer differs", fast);
			pfree((char *) fv.data);
			minidb_version_get_buf(rec, &ref, &fv, &tiny);
			if (!minidb_version_equal(&fv, &want))
				mismatch("version %d rebuilt into a growing buffer differs", fast);
			pfree(tiny.data);
		}
	}
}

/* The refs the iterator hands out are consistent with the record */
static void
check_ref(char *rec, uint32 len, int format, const MinidbVersionRef *ref,
		  int seen)
{
	const MinidbVersionHeader *vh = ref->vh;
	bool		delta;

	if (ref->index != seen)
		mismatch("iterator skipped from %d to %d", seen, ref->index);
	if (ref->reclen != len)
		mismatch("iterator's ref %d: reclen %u of a %u-byte record", seen,
				 ref->reclen, len);
	if (is_virtual(ref))
	{
		if (format != MINIDB_FORMAT_V3 || seen != 0 || ref->offset != 0 ||
			ref->datalen != 0 || !(vh->vh_flags & MINIDB_V_VIRTUAL) ||
			!(vh->vh_flags & MINIDB_V_NODATA_MASK) || vh->vh_natts != 0)
			mismatch("iterator's virtual marker %d is inconsistent", seen);
		return;
	}
	delta = (vh->vh_flags & MINIDB_V_ENC_MASK) == MINIDB_V_ENC_DELTA;
	if ((char *) vh != rec + ref->offset ||
		ref->offset % (format == MINIDB_FORMAT_V3 ? 4 : MAXIMUM_ALIGNOF) != 0 ||
		(uint64) ref->offset + MINIDB_VERSION_HDRSZ > ref->end ||
		ref->end > len || ref->dataoff > ref->end ||
		ref->bitmapoff != ref->offset +
		(format == MINIDB_FORMAT_V3 ? MINIDB_VERSION_HDRSZ : MINIDB_V1_VERSION_HDRSZ))
		mismatch("iterator's ref %d is inconsistent (offset %u, end %u, data at %u)",
				 seen, ref->offset, ref->end, ref->dataoff);
	if (!delta && (ref->dataoff != MAXALIGN(ref->dataoff) ||
				   ref->dataoff + ref->datalen != ref->end))
		mismatch("iterator's ref %d: whole data at %u, %u bytes, version ends at %u",
				 seen, ref->dataoff, ref->datalen, ref->end);
	if (delta && (format != MINIDB_FORMAT_V3 || seen == 0 ||
				  ref->dataoff % 2 != 0 ||
				  ref->datalen < ref->end - ref->dataoff - 4))
		mismatch("iterator's ref %d: a difference at %u, %u bytes, version ends at %u",
				 seen, ref->dataoff, ref->datalen, ref->end);
}

/*
 * The ordered walker (minidb_chain_find_visible_ordered, the search for
 * old snapshots) against the linear walk, with a predicate that keeps its
 * contract whatever the record holds: the versions from index threshold
 * on are seen, unless hinted aborted, or unsettled and "in progress"
 * (index % 64 in the mask); settled() answers the same, without the log.
 */
typedef struct OrdPredicate
{
	int			threshold;
	uint64		inprogress;
	int			last_passed;	/* last rejected that was not hinted aborted */
	bool		bad_settled;
} OrdPredicate;

static bool
ord_sees(const OrdPredicate *p, const MinidbVersionHeader *vh, int index)
{
	if (vh->vh_flags & MINIDB_V_XMIN_ABORTED)
		return false;
	if (!MINIDB_VERSION_SETTLED(vh->vh_flags) &&
		(p->inprogress & (UINT64CONST(1) << (index % 64))))
		return false;
	return index >= p->threshold;
}

static bool
ord_visible(MinidbVersionHeader *vh, int index, void *arg)
{
	OrdPredicate *p = (OrdPredicate *) arg;
	bool		sees = ord_sees(p, vh, index);

	if (!sees && !(vh->vh_flags & MINIDB_V_XMIN_ABORTED))
		p->last_passed = index;
	return sees;
}

static bool
ord_settled(MinidbVersionHeader *vh, int index, void *arg)
{
	OrdPredicate *p = (OrdPredicate *) arg;

	if (!MINIDB_VERSION_SETTLED(vh->vh_flags))
		p->bad_settled = true;
	return ord_sees(p, vh, index);
}

/*
 * Valid records: the same answer, ref and version passed over as the
 * linear walk.  Damaged ones (which the linear walk, too, may read past:
 * V2 and V3 check only what they visit): any answer, but a hit's ref lies
 * inside the record and its version reads without trouble (ASan watches
 * the read).
 */
static void
compare_ordered(char *rec, uint32 len, bool valid, int threshold,
				uint64 inprogress)
{
	OrdPredicate lp = {threshold, inprogress, -1, false};
	OrdPredicate op = lp;
	MinidbVersionRef lref;
	MinidbVersionRef oref;
	MinidbChainError lerr;
	MinidbChainError oerr;
	int			lin = minidb_chain_find_visible(rec, len, ord_visible, &lp,
												&lref, &lerr);
	int			ord = minidb_chain_find_visible_ordered(rec, len, ord_visible,
														ord_settled, &op,
														&oref, &oerr);

	if (op.bad_settled)
		mismatch("ordered walker asked settled() about an unsettled version");
	if (valid)
	{
		if (lin != ord || (lin >= 0 && (lref.index != oref.index ||
										lref.offset != oref.offset ||
										lref.end != oref.end)) ||
			(lin >= -1 && lp.last_passed != op.last_passed))
			mismatch("ordered walker: %d (passed %d), linear walk %d (passed %d), threshold %d",
					 ord, op.last_passed, lin, lp.last_passed, threshold);
		return;
	}
	/* (the linear walk may miss damage too: see compare_walkers) */
	if (ord >= 0)
	{
		MinidbVersionData fv;

		if (oref.index != ord || oref.reclen != len ||
			(!is_virtual(&oref) &&
			 ((char *) oref.vh != rec + oref.offset ||
			  (uint64) oref.offset + MINIDB_VERSION_HDRSZ > oref.end ||
			  oref.end > len || oref.dataoff > oref.end)))
			mismatch("ordered walker's ref of version %d of a damaged record is inconsistent",
					 ord);
		minidb_version_get_buf(rec, &oref, &fv, &buf_a);
	}
}

/* A predicate that accepts the head (the first version asked about) */
static bool
plain_head(MinidbVersionHeader *vh, int index, void *arg)
{
	return true;
}

/*
 * minidb_v3_plain_record (the scans' fast path) accepts only sound
 * records (validate passes them) of one data version, and reports that
 * version as the fast walker finds it: its header, data and length.
 */
static void
compare_plain(char *rec, uint32 len, bool valid)
{
	const MinidbVersionHeader *vh;
	uint32		dataoff;
	uint32		datalen;
	MinidbVersionRef ref;
	MinidbChainError err;
	MinidbVersionData fv;

	if (!minidb_v3_plain_record(rec, len, &vh, &dataoff, &datalen))
		return;
	if (!valid)
		mismatch("minidb_v3_plain_record accepts a record validate refuses");
	if (minidb_record_nversions(rec, len) != 1 ||
		minidb_chain_find_visible(rec, len, plain_head, NULL, &ref, &err) != 0 ||
		(const char *) ref.vh != (const char *) vh ||
		ref.end != len)
		mismatch("minidb_v3_plain_record's version is not the fast walker's only one");
	minidb_version_get_buf(rec, &ref, &fv, &buf_a);
	if (fv.data != rec + dataoff || fv.datalen != datalen ||
		(fv.bitmap != NULL) != ((vh->vh_flags & MINIDB_V_HASNULL) != 0) ||
		(fv.bitmap &&
		 (const char *) fv.bitmap != rec + MINIDB_R3_PLAIN_START + MINIDB_VERSION_HDRSZ))
		mismatch("minidb_v3_plain_record's data is not the fast walker's");
}

/*
 * The newest reader's shortcut (minidb_chain_single_plain) accepts only a
 * record the validator accepts, of one data version, no lockers and no
 * end, and hands out the version the walker returns, read in place where
 * the walker reads it.  Counted, so a run can say it was exercised.
 */
static uint64 single_plain_hits = 0;

static bool
see_all(MinidbVersionHeader *vh, int index, void *arg)
{
	return true;
}

static void
compare_single_plain(char *rec, uint32 len, bool valid, int n)
{
	MinidbVersionData pv;
	MinidbVersionData fv;
	MinidbVersionRef ref;
	MinidbLockers lk;

	if (!minidb_chain_single_plain(rec, len, &pv))
		return;
	single_plain_hits++;
	if (!valid || n != 1)
		mismatch("single_plain accepted a record that validate calls %s, with %d versions",
				 valid ? "valid" : "damaged", n);
	if (minidb_chain_find_visible(rec, len, see_all, NULL, &ref, NULL) != 0 ||
		is_virtual(&ref))
		mismatch("single_plain accepted a record whose newest version is not a data version 0");
	minidb_version_get_buf(rec, &ref, &fv, &buf_a);
	if (!minidb_version_equal(&pv, &fv) || pv.data != fv.data ||
		(pv.flags & MINIDB_V_NODATA_MASK) ||
		(pv.flags & MINIDB_V_ENC_MASK) != MINIDB_V_ENC_FULL)
		mismatch("single_plain's version differs from the walker's");
	minidb_record_get_lockers(rec, &lk);
	if (lk.mode != MINIDB_LOCK_NONE || TransactionIdIsValid(lk.xid))
		mismatch("single_plain accepted a record with lockers");
}

/*
 * The newest reader's shortcut for a V3 record of many versions
 * (minidb_v3_newest_plain) makes the checks the fast walker makes on a
 * read that stops at data version 0 (the header, version 0, the tail
 * check), no more: so true implies that the walker, asked by a snapshot
 * that sees version 0, returns that same data version 0, read in place,
 * of a record without lockers, end or token; and that a record validate
 * refuses is damaged only where that read does not look (a middle
 * version, or the bound of the last version's prefix and suffix, which
 * only its newer neighbour gives).  When the record validates, version 0
 * is the reference walker's, and so is version 1's header as it gives
 * it when asked.  Counted, with the records of two versions or more.
 */
static uint64 newest_plain_hits = 0;
static uint64 newest_plain_multi = 0;

/*
 * minidb_v3_newest_plain asked for version 1's header too, on a valid
 * record it accepted without: the same newest version, and the reference
 * walker's version 1 (its xmin, command id and flags, the encoding
 * aside); refused for a record of one version
 */
static void
compare_older_header(const char *rec, uint32 len, int n,
					 const MinidbVersionData *vs, const MinidbVersionData *pv)
{
	MinidbVersionHeader older;
	MinidbVersionData again;
	bool		got = minidb_v3_newest_plain(rec, len, &again, &older);

	if (n < 2)
	{
		if (got)
			mismatch("newest_plain gave version 1's header for a record of one version");
		return;
	}
	if (!got || !minidb_version_equal(&again, pv) || again.data != pv->data ||
		older.vh_xmin != vs[1].xmin || older.vh_cid != vs[1].cid ||
		(older.vh_flags & ~MINIDB_V_ENC_MASK) !=
		(vs[1].flags & ~MINIDB_V_ENC_MASK))
		mismatch("newest_plain's version 1 header differs from the reference walker's version 1");
}

static void
compare_newest_plain(char *rec, uint32 len, bool valid, int n,
					 const MinidbVersionData *vs, const MinidbChainError *verr)
{
	MinidbVersionData pv;
	MinidbVersionData fv;
	MinidbVersionRef ref;
	MinidbChainError err;
	MinidbLockers lk;
	uint32		off0;
	int			nv;

	{
		/* the scan's inline copy: the same answer as with older given */
		MinidbVersionData iv;
		MinidbVersionHeader io;
		MinidbVersionHeader eo;
		bool		inl = minidb_v3_newest_of_many(rec, len, &iv, &io);

		if (inl != minidb_v3_newest_plain(rec, len, &pv, &eo))
			mismatch("newest_of_many says %d, newest_plain with older the opposite",
					 (int) inl);
		if (inl &&
			(iv.xmin != pv.xmin || iv.cid != pv.cid || iv.flags != pv.flags ||
			 iv.natts != pv.natts || iv.bitmap != pv.bitmap ||
			 iv.data != pv.data || iv.datalen != pv.datalen ||
			 memcmp(&io, &eo, sizeof(io)) != 0))
			mismatch("newest_of_many's version or older header differs from newest_plain's");
	}
	if (!minidb_v3_newest_plain(rec, len, &pv, NULL))
		return;
	newest_plain_hits++;
	if (minidb_record_format_of(rec) != MINIDB_FORMAT_V3)
		mismatch("newest_plain accepted a record of format %d",
				 minidb_record_format_of(rec));
	nv = minidb_record_nversions(rec, len);
	if (nv >= 2)
		newest_plain_multi++;
	if (minidb_chain_find_visible(rec, len, see_all, NULL, &ref, &err) != 0 ||
		is_virtual(&ref))
		mismatch("newest_plain accepted a record on which the walker, seeing version 0, does not return data version 0");
	minidb_version_get_buf(rec, &ref, &fv, &buf_a);
	if (!minidb_version_equal(&pv, &fv) || pv.data != fv.data ||
		(pv.bitmap != NULL) != (fv.bitmap != NULL) ||
		(pv.bitmap && pv.bitmap != fv.bitmap) ||
		(pv.flags & MINIDB_V_NODATA_MASK) ||
		(pv.flags & MINIDB_V_XMIN_ABORTED) ||
		(pv.flags & MINIDB_V_ENC_MASK) != MINIDB_V_ENC_FULL)
		mismatch("newest_plain's version differs from the walker's");
	off0 = ref.offset;
	if (minidb_chain_find_visible_ordered(rec, len, see_all, see_all, NULL,
										  &ref, &err) != 0 ||
		is_virtual(&ref) || ref.offset != off0)
		mismatch("newest_plain accepted a record on which the ordered walker does not return data version 0");
	minidb_record_get_lockers(rec, &lk);
	if (lk.mode != MINIDB_LOCK_NONE || TransactionIdIsValid(lk.xid) ||
		(uint8) rec[1] != 0 ||
		((uint8) rec[0] & (MINIDB_R3_XMAX | MINIDB_R3_SUCC)))
		mismatch("newest_plain accepted a record with lockers, an end or a token");
	if (valid)
	{
		MinidbVersionData want;

		if (n < 1 || n != nv)
			mismatch("newest_plain accepted a valid record of %d versions", n);
		want = reader_view(&vs[0]);
		if (!minidb_version_equal(&pv, &want))
			mismatch("newest_plain's version differs from the reference walker's version 0");
		compare_older_header(rec, len, n, vs, &pv);
	}
	else if (verr->version < 1 ||
			 (verr->version >= nv - 1 && strcmp(verr->field, "r3_delta") != 0))
		mismatch("newest_plain accepted a record damaged where its read looks: version %d of %d, field \"%s\": %s",
				 verr->version, nv, verr->field, verr->detail);
}

/*
 * The shortcut for a record whose only optional field is a lock-only
 * xmax (minidb_v3_newest_locked; the scans take its inline copy,
 * minidb_v3_locked_newest, which must answer every record the same,
 * field by field, lockers included) makes the checks the fast walker
 * makes on a read that stops at data version 0, no more; so true implies
 * a V3 record with that field and no successor field, whose lockers are
 * minidb_record_get_lockers's (what the scan's slow path shows as the
 * tuple's xmax), on which the walkers, asked by a snapshot that sees
 * version 0, return that same data version 0, read in place; a record
 * validate refuses is damaged only where that read does not look.  When
 * the record validates, version 0 is the reference walker's, and so is
 * version 1's header.  Counted.
 */
static uint64 newest_locked_hits = 0;
static uint64 newest_locked_multi = 0;

static void
compare_newest_locked(char *rec, uint32 len, bool valid, int n,
					  const MinidbVersionData *vs, const MinidbChainError *verr)
{
	MinidbVersionData pv;
	MinidbVersionData iv;
	MinidbVersionData fv;
	MinidbVersionHeader po;
	MinidbVersionHeader io;
	MinidbLockers pl;
	MinidbLockers il;
	MinidbLockers lk;
	MinidbVersionRef ref;
	MinidbChainError err;
	uint32		off0;
	int			nv;
	bool		inl;
	bool		acc;

	memset(&iv, 0, sizeof(iv));
	memset(&io, 0, sizeof(io));
	memset(&il, 0, sizeof(il));
	inl = minidb_v3_locked_newest(rec, len, &iv, &io, &il);
	acc = minidb_v3_newest_locked(rec, len, &pv, &po, &pl);
	if (inl != acc)
		mismatch("locked_newest says %d, newest_locked the opposite", (int) inl);
	if (!acc)
		return;
	if (iv.xmin != pv.xmin || iv.cid != pv.cid || iv.flags != pv.flags ||
		iv.natts != pv.natts || iv.bitmap != pv.bitmap ||
		iv.data != pv.data || iv.datalen != pv.datalen ||
		io.vh_xmin != po.vh_xmin ||
		(TransactionIdIsValid(po.vh_xmin) && memcmp(&io, &po, sizeof(io)) != 0) ||
		il.xid != pl.xid || il.mode != pl.mode || il.multi != pl.multi ||
		il.with_updater != pl.with_updater)
		mismatch("locked_newest's version, older header or lockers differ from newest_locked's");
	newest_locked_hits++;
	minidb_record_get_lockers(rec, &lk);
	if (minidb_record_format_of(rec) != MINIDB_FORMAT_V3 ||
		((uint8) rec[0] & (MINIDB_R3_XMAX | MINIDB_R3_SUCC)) != MINIDB_R3_XMAX ||
		!((uint8) rec[1] & MINIDB_R3X_LOCK_ONLY) ||
		minidb_record_spec_token(rec) != 0 ||
		!TransactionIdIsValid(lk.xid) || lk.mode == MINIDB_LOCK_NONE ||
		lk.with_updater)
		mismatch("newest_locked accepted a record without a lock-only xmax, or with a successor field");
	if (lk.xid != pl.xid || lk.mode != pl.mode || lk.multi != pl.multi)
		mismatch("newest_locked's lockers (%u, mode %u, multi %d) are not the record's (%u, mode %u, multi %d)",
				 pl.xid, pl.mode, (int) pl.multi, lk.xid, lk.mode, (int) lk.multi);
	nv = minidb_record_nversions(rec, len);
	if (nv >= 2)
		newest_locked_multi++;
	if (minidb_chain_find_visible(rec, len, see_all, NULL, &ref, &err) != 0 ||
		is_virtual(&ref))
		mismatch("newest_locked accepted a record on which the walker, seeing version 0, does not return data version 0");
	minidb_version_get_buf(rec, &ref, &fv, &buf_a);
	if (!minidb_version_equal(&pv, &fv) || pv.data != fv.data ||
		(pv.bitmap != NULL) != (fv.bitmap != NULL) ||
		(pv.bitmap && pv.bitmap != fv.bitmap) ||
		(pv.flags & (MINIDB_V_NODATA_MASK | MINIDB_V_XMIN_ABORTED)) ||
		(pv.flags & MINIDB_V_ENC_MASK) != MINIDB_V_ENC_FULL)
		mismatch("newest_locked's version differs from the walker's");
	off0 = ref.offset;
	if (minidb_chain_find_visible_ordered(rec, len, see_all, see_all, NULL,
										  &ref, &err) != 0 ||
		is_virtual(&ref) || ref.offset != off0)
		mismatch("newest_locked accepted a record on which the ordered walker does not return data version 0");
	if (valid)
	{
		MinidbVersionData want;

		if (n < 1 || n != nv)
			mismatch("newest_locked accepted a valid record of %d versions", n);
		want = reader_view(&vs[0]);
		if (!minidb_version_equal(&pv, &want))
			mismatch("newest_locked's version differs from the reference walker's version 0");
		if (n >= 2 ?
			(po.vh_xmin != vs[1].xmin || po.vh_cid != vs[1].cid ||
			 (po.vh_flags & ~MINIDB_V_ENC_MASK) !=
			 (vs[1].flags & ~MINIDB_V_ENC_MASK)) :
			TransactionIdIsValid(po.vh_xmin))
			mismatch("newest_locked's version 1 header differs from the reference walker's");
	}
	else if (verr->version < 1 ||
			 (verr->version >= nv - 1 && strcmp(verr->field, "r3_delta") != 0))
		mismatch("newest_locked accepted a record damaged where its read looks: version %d of %d, field \"%s\": %s",
				 verr->version, nv, verr->field, verr->detail);
}

/*
 * Every check on one record.  full: every visibility cut; else every cut
 * of the plain "oldest k" predicate and a few with skipped versions (the
 * V3 program checks that much after each of its steps, and all of it at
 * the end).
 */
static void
check_record(char *rec, uint32 len, uint64 seed, bool full)
{
	MinidbChainError verr;
	MinidbChainError rerr;
	MinidbChainError ierr;
	MinidbVersionData *vs;
	MinidbChainIter it;
	MinidbVersionRef ref;
	bool		valid;
	bool		damaged = false;
	int			format = len >= 1 ? minidb_record_format_of(rec) : 0;
	int			n;
	int			seen = 0;
	Predicate	p;
	int			i;

	minidb_multi_updater_hook = hook_wanted ? fuzz_multi_updater : NULL;
	memset(&verr, 0, sizeof(verr));
	valid = minidb_record_validate(rec, len, &verr);
	n = minidb_chain_decode_all(rec, len, &vs, &rerr);
	if (valid != (n >= 0))
		mismatch("validate says %d, reference walker returned %d", valid, n);
	if (!valid && !same_error(&verr, &rerr))
		mismatch("validate and reference walker report different errors");
	if (valid && n != minidb_record_nversions(rec, len))
		mismatch("reference walker decoded %d versions, minidb_record_nversions says %d",
				 n, minidb_record_nversions(rec, len));
	compare_plain(rec, len, valid);

	/* the iterator */
	if (minidb_chain_iter_init(&it, rec, len, &ierr))
	{
		while (minidb_chain_iter_next(&it, &ref, &ierr, &damaged))
		{
			check_ref(rec, len, format, &ref, seen);
			if (valid)
			{
				MinidbVersionData fv;
				MinidbVersionData want;

				if (seen >= n)
					mismatch("iterator yields version %d of %d", seen, n);
				want = reader_view(&vs[seen]);
				minidb_version_get_buf(rec, &ref, &fv, &buf_a);
				if (!minidb_version_equal(&fv, &want))
					mismatch("iterator's version %d differs from reference", seen);
				if (format != MINIDB_FORMAT_V3 &&
					minidb_version_size(&vs[seen]) != ref.end - ref.offset)
					mismatch("version %d: size %u but it takes %u bytes", seen,
							 minidb_version_size(&vs[seen]),
							 ref.end - ref.offset);
			}
			seen++;
		}
	}
	else
		damaged = true;
	if (damaged == valid)
		mismatch("iterator damaged=%d but validate valid=%d", damaged, valid);
	if (valid && seen != n)
		mismatch("iterator saw %d versions, reference %d", seen, n);
	if (!valid && !same_error(&verr, &ierr))
		mismatch("iterator and validate report different errors");
	compare_single_plain(rec, len, valid, n);
	compare_newest_plain(rec, len, valid, n, vs, &verr);
	compare_newest_locked(rec, len, valid, n, vs, &verr);

	/* the visibility cuts */
	memset(&p, 0, sizeof(p));
	if (valid)
		p.nversions = n;
	else if (format == MINIDB_FORMAT_V3)
		p.nversions = Max(minidb_record_nversions(rec, len), 1);
	else if (len >= MINIDB_RECORD_HDRSZ)
		p.nversions = minidb_record_header(rec)->rh_nversions;
	else
		p.nversions = 1;
	for (i = 0; i < 4; i++)
	{
		int			k;
		int			kmax = p.nversions;
		int			step = kmax > 48 ? kmax / 24 : 1;

		p.kind = 0;
		p.aborted = (i & 1) ? seed : 0;
		p.inprogress = (i & 2) ? (seed >> 32 | seed << 32) : 0;
		if (!full && i > 0)
		{
			/* with skipped versions: one cut the seed picks, and all */
			p.oldest_k = (int) ((seed >> (8 * i)) % (uint64) (kmax + 1));
			compare_walkers(rec, len, valid, &verr, vs, n, &p);
			p.oldest_k = kmax;
			compare_walkers(rec, len, valid, &verr, vs, n, &p);
			continue;
		}
		for (k = 0; k <= kmax; k += step)
		{
			p.oldest_k = k;
			compare_walkers(rec, len, valid, &verr, vs, n, &p);
		}
		p.oldest_k = kmax;		/* sees everything (and the head) */
		compare_walkers(rec, len, valid, &verr, vs, n, &p);
	}
	/* the ordered walker: thresholds across the chain, and past its ends */
	for (i = 0; i <= p.nversions + 1;
		 i += Max(p.nversions / (full ? 16 : 4), 1))
	{
		compare_ordered(rec, len, valid, i, 0);
		compare_ordered(rec, len, valid, i, seed);
	}
	/* xid horizons: one per distinct xmin, plus none and all */
	p.kind = 1;
	p.inprogress = seed;
	p.horizon = 0;
	compare_walkers(rec, len, valid, &verr, vs, n, &p);
	p.horizon = MaxTransactionId;
	compare_walkers(rec, len, valid, &verr, vs, n, &p);
	for (i = 0; full && valid && i < n && i < 64; i++)
	{
		MinidbVersionData rv = reader_view(&vs[i]);

		p.horizon = rv.xmin;
		compare_walkers(rec, len, valid, &verr, vs, n, &p);
		p.horizon = rv.xmin + 1;
		compare_walkers(rec, len, valid, &verr, vs, n, &p);
	}

	if (n > 0)
		minidb_chain_free_all(vs, n);
	minidb_multi_updater_hook = NULL;
}

/* ---- structured mode: build, model, damage ---- */

typedef struct Reader
{
	const uint8 *p;
	size_t		len;
} Reader;

static uint8
next_byte(Reader *r)
{
	uint8		b;

	if (r->len == 0)
		return 0;
	b = *r->p;
	r->p++;
	r->len--;
	return b;
}

static char *
ensure(char *buf, uint32 *cap, uint32 need)
{
	if (need <= *cap)
		return buf;
	*cap = need * 2;
	buf = realloc(buf, *cap);
	if (buf == NULL)
		abort();
	return buf;
}

/* A copy of len bytes in a buffer of exactly that size (for ASan) */
static char *
exact_copy(const char *rec, uint32 len)
{
	char	   *copy = malloc(len ? len : 1);

	if (copy == NULL)
		abort();
	memcpy(copy, rec, len);
	return copy;
}

/*
 * Damage a built record (byte d of the program says how; the bytes after
 * it where).  Versions are picked from the oldest, so that the smallest
 * choice hits the last version, which every read checks.
 */
static uint32
damage_record(Reader *r, char *rec, uint32 len, uint32 cap)
{
	uint8		d = next_byte(r);
	int			format = minidb_record_format_of(rec);
	MinidbChainIter it;
	MinidbVersionRef ref;
	MinidbChainError err;
	bool		damaged;
	uint32		offs[MAX_PROGRAM_VERSIONS + 2];
	uint32		ends[MAX_PROGRAM_VERSIONS + 2];
	uint32		affix[MAX_PROGRAM_VERSIONS + 2];	/* DELTA: affix offset */
	uint32		prevlen[MAX_PROGRAM_VERSIONS + 2];
	int			nv = 0;
	int			ndelta = 0;
	int			deltas[MAX_PROGRAM_VERSIONS + 2];
	uint32		lastlen = 0;

	/* where the (data) versions are, before the damage */
	if (minidb_chain_iter_init(&it, rec, len, &err))
		while (minidb_chain_iter_next(&it, &ref, &err, &damaged))
		{
			if (is_virtual(&ref))
				continue;
			if (nv >= lengthof(offs))
				break;
			offs[nv] = ref.offset;
			ends[nv] = ref.end;
			prevlen[nv] = lastlen;
			if ((ref.vh->vh_flags & MINIDB_V_ENC_MASK) == MINIDB_V_ENC_DELTA)
			{
				affix[nv] = ref.dataoff;
				deltas[ndelta++] = nv;
			}
			lastlen = ref.datalen;
			nv++;
		}

	switch (d & 7)
	{
		case 0:
			break;
		case 1:
			{
				/* flip a byte anywhere */
				uint32		hi = next_byte(r);
				uint32		pos = (hi << 8 | next_byte(r)) % len;

				rec[pos] ^= (char) (d | 1);
				break;
			}
		case 2:
			/* truncate */
			len -= Min(len - 1, (uint32) (d >> 3) + 1);
			if (format != MINIDB_FORMAT_V3 && (d & 0x80) &&
				len >= MINIDB_RECORD_HDRSZ)
				minidb_record_header(rec)->rh_len = len;
			break;
		case 3:
			{
				/* append */
				uint32		extra = (d >> 3) % 32 + 1;

				memset(rec + len, next_byte(r), extra);
				len += extra;
				if (format != MINIDB_FORMAT_V3)
					minidb_record_header(rec)->rh_len = len;
				break;
			}
		case 4:
			{
				/* where a version ends (V3: trailer; V2: directory; V1: vh_len) */
				int			i = nv - 1 - next_byte(r) % Max(nv, 1);
				int8		delta = (int8) next_byte(r);

				if (delta == 0)
					delta = 4;
				if (nv == 0)
					break;
				if (format == MINIDB_FORMAT_V3)
				{
					if (!((uint8) rec[0] & MINIDB_R3_MULTI))
						rec[0] ^= MINIDB_R3_MULTI;
					else if (d & 0x80)
					{
						/* the count */
						uint16	   *cnt = (uint16 *) (rec + len - 2);

						*cnt += delta;
					}
					else
					{
						uint16	   *e = (uint16 *) (rec + len - 2 * (nv + 1 - i));

						*e += delta;
					}
				}
				else if (format == MINIDB_FORMAT_V2)
					minidb_record_dir(rec)[i] += delta;
				else
					((MinidbVersionHeaderV1 *) (rec + offs[i]))->vh_len += delta;
				break;
			}
		case 5:
			{
				/* header bits */
				uint8		b = next_byte(r);

				if (format == MINIDB_FORMAT_V3)
				{
					if ((b & 0x20) && ((uint8) rec[0] & MINIDB_R3_XMAX) &&
						len >= MINIDB_R3_INFO_PREFIX + 4)
						memset(rec + MINIDB_R3_INFO_PREFIX, 0, 4);
					else
						rec[(b & 0x10) ? 0 : 1] ^= (char) (1 << (b & 7));
				}
				else
					rec[b % MINIDB_V2_DIR_OFFSET] ^= (char) (1 << ((b >> 5) & 7));
				break;
			}
		case 6:
			if (ndelta > 0)
			{
				/* V3: a difference's prefix or suffix */
				int			i = deltas[ndelta - 1 - next_byte(r) % ndelta];
				uint8		b = next_byte(r);
				uint16	   *field = (uint16 *) (rec + affix[i] + ((b & 1) ? 2 : 0));
				uint16	   *other = (uint16 *) (rec + affix[i] + ((b & 1) ? 0 : 2));

				switch ((b >> 1) & 3)
				{
					case 0:
						/* one more than the newer version has */
						*field = (uint16) (prevlen[i] - *other + 1);
						break;
					case 1:
						*field = (uint16) (b << 8 | next_byte(r));
						break;
					case 2:
						*field = 0xFFFF;
						break;
					default:
						/* still valid: the version reads other bytes */
						*field = *field ? *field - 1 : 1;
						break;
				}
				break;
			}
			/* FALLTHROUGH */
		default:
			if (nv > 0)
			{
				/* a version header field */
				int			i = nv - 1 - next_byte(r) % nv;
				MinidbVersionHeader *vh = (MinidbVersionHeader *) (rec + offs[i]);
				uint8		b = next_byte(r);

				switch (b % 6)
				{
					case 0:
						vh->vh_xmin = InvalidTransactionId;
						break;
					case 1:
						vh->vh_flags ^= (uint16) (1 << ((b >> 3) % 16));
						break;
					case 2:
						vh->vh_natts = (b & 0x40) ? 0xFFFF : MINIDB_MAX_NATTS;
						break;
					case 3:
						vh->vh_flags |= MINIDB_V_HASNULL;
						vh->vh_natts = (b & 0x40) ? 0 : 1600;
						break;
					case 4:
						vh->vh_flags ^= MINIDB_V_ENC_DELTA;
						break;
					default:
						/* in V1/V2, vh_len; in V3 the first bytes after */
						if (ends[i] >= offs[i] + 14)
							rec[offs[i] + 12 + (b >> 7)] ^= (char) (b | 1);
						break;
				}
			}
			break;
	}
	Assert(len <= cap);
	return len;
}

/* ---- the V1/V2 program: both formats side by side ---- */

typedef struct Model
{
	int			n;				/* versions in v[], newest first */
	int			slots;			/* bytes[] slots used by this program */
	MinidbVersionData v[MAX_PROGRAM_VERSIONS + 2];
	uint8		bytes[MAX_PROGRAM_VERSIONS + 2][256 + 32];	/* bitmap, data */
} Model;

static Model model;

static void
model_prepend(const MinidbVersionData *v, const uint8 *bitmap_data)
{
	int			slot = model.slots++;	/* never reused within a program */

	memmove(&model.v[1], &model.v[0], sizeof(MinidbVersionData) * model.n);
	memcpy(model.bytes[slot], bitmap_data, sizeof(model.bytes[slot]));
	model.v[0] = *v;
	if (v->bitmap)
		model.v[0].bitmap = model.bytes[slot];
	model.v[0].data = (const char *) model.bytes[slot] + 32;
	model.n++;
}

/* Read one version description from the program */
static void
read_version(Reader *r, uint8 op, MinidbVersionData *v, uint8 *space)
{
	uint8		hints = (op >> 2) & 3;

	memset(v, 0, sizeof(*v));
	memset(space, 0, 256 + 32);
	v->xmin = FirstNormalTransactionId + next_byte(r);
	v->cid = next_byte(r);
	v->flags = hints == 1 ? MINIDB_V_XMIN_COMMITTED :
		hints == 2 ? MINIDB_V_XMIN_ABORTED :
		hints == 3 ? (MINIDB_V_XMIN_COMMITTED | MINIDB_V_FROZEN) : 0;
	if ((op & 3) == 1)
	{
		v->flags |= MINIDB_V_TOMBSTONE;
		return;
	}
	v->natts = 1 + (next_byte(r) % 24);
	if (op & 0x10)
		v->flags |= MINIDB_V_HASVARWIDTH;
	if ((op & 3) == 2)
	{
		int			i;

		v->flags |= MINIDB_V_HASNULL;
		for (i = 0; i < MINIDB_BITMAPLEN(v->natts); i++)
			space[i] = next_byte(r);
		v->bitmap = space;
	}
	v->datalen = next_byte(r) % 200;
	for (int j = 0; j < (int) v->datalen; j++)
		space[32 + j] = r->len ? next_byte(r) : (uint8) j;
	v->data = (const char *) space + 32;
}

static void
run_program(Reader *r, uint64 seed, int format)
{
	uint32		cap = 0;
	char	   *rec = NULL;
	uint32		len = 0;
	uint32		cap2 = 0;
	char	   *rec2 = NULL;		/* the same program, in the other format */
	uint32		len2 = 0;
	int			other = format == MINIDB_FORMAT_V2 ?
		MINIDB_FORMAT_V1 : MINIDB_FORMAT_V2;
	MinidbVersionData *vs2;
	int			n2;
	uint8		space[256 + 32];
	MinidbVersionData v;
	MinidbVersionData *vs;
	MinidbChainError err;
	char	   *exact;
	int			n;
	int			i;

	model.n = 0;
	model.slots = 0;
	read_version(r, next_byte(r) & ~3, &v, space);	/* head: a data version */
	rec = ensure(rec, &cap, MINIDB_RECORD_HDRSZ + minidb_version_size(&v));
	len = minidb_record_build_as(rec, cap, &v, format);
	rec2 = ensure(rec2, &cap2, MINIDB_RECORD_HDRSZ + minidb_version_size(&v));
	len2 = minidb_record_build_as(rec2, cap2, &v, other);
	model_prepend(&v, space);

	while (r->len > 1 && model.slots < MAX_PROGRAM_VERSIONS)
	{
		uint8		op = next_byte(r);

		if ((op & 3) == 3)
		{
			/* prune with a keep mask; never everything */
			bool		keep[MAX_PROGRAM_VERSIONS];
			uint8		mask = next_byte(r);
			int			kept = 0;

			for (i = 0; i < model.n; i++)
			{
				keep[i] = (mask >> (i % 8)) & 1;
				kept += keep[i];
			}
			if (kept == 0)
				keep[0] = true;
			if (!minidb_record_prune_fits(rec, len, keep))
				mismatch("prune_fits refuses a V%d prune", format);
			len = minidb_record_prune(rec, len, keep);
			len2 = minidb_record_prune(rec2, len2, keep);
			for (i = 0, kept = 0; i < model.n; i++)
				if (keep[i])
					model.v[kept++] = model.v[i];
			model.n = kept;
			/* bytes[] slots stay where they are; v[] points into them */
			continue;
		}
		read_version(r, op, &v, space);
		rec = ensure(rec, &cap, minidb_record_prepend_size(len, &v));
		if (minidb_record_prepend_size_rec(rec, len, &v) >
			minidb_record_prepend_size(len, &v))
			mismatch("prepend_size is not an upper bound");
		len = minidb_record_prepend(rec, cap, rec, len, &v);
		rec2 = ensure(rec2, &cap2, minidb_record_prepend_size_rec(rec2, len2, &v));
		len2 = minidb_record_prepend(rec2, cap2, rec2, len2, &v);
		model_prepend(&v, space);
	}
	if (next_byte(r) & 1)
	{
		/* a moved head */
		memset(&v, 0, sizeof(v));
		v.xmin = FirstNormalTransactionId + 300;
		v.flags = MINIDB_V_MOVED;
		rec = ensure(rec, &cap, minidb_record_prepend_size(len, &v));
		len = minidb_record_prepend(rec, cap, rec, len, &v);
		ItemPointerSet(&minidb_record_header(rec)->rh_successor, 5, 9);
		rec2 = ensure(rec2, &cap2, minidb_record_prepend_size(len2, &v));
		len2 = minidb_record_prepend(rec2, cap2, rec2, len2, &v);
		ItemPointerSet(&minidb_record_header(rec2)->rh_successor, 5, 9);
		model_prepend(&v, space);
	}

	/* the chain we built must be valid and hold the model, exactly */
	if (!minidb_record_validate(rec, len, &err))
		mismatch("built chain invalid: version %d, field %s: %s",
				 err.version, err.field, err.detail);
	n = minidb_chain_decode_all(rec, len, &vs, &err);
	if (n != model.n)
		mismatch("built %d versions, decoded %d", model.n, n);
	for (i = 0; i < n; i++)
		if (!minidb_version_equal(&vs[i], &model.v[i]))
			mismatch("built version %d differs from the model", i);

	/* the other format holds the same versions */
	if (minidb_record_format_of(rec) != format ||
		minidb_record_format_of(rec2) != other)
		mismatch("prepend or prune changed a record's format");
	n2 = minidb_chain_decode_all(rec2, len2, &vs2, &err);
	if (n2 != n)
		mismatch("format %d: %d versions, format %d: %d (version %d, field %s: %s)",
				 format, n, other, n2, err.version, n2 < 0 ? err.field : "",
				 n2 < 0 ? err.detail : "");
	for (i = 0; i < n; i++)
		if (!minidb_version_equal(&vs[i], &vs2[i]))
			mismatch("version %d differs between the formats", i);
	if ((int64) (format == MINIDB_FORMAT_V2 ? len - len2 : len2 - len) !=
		(int64) MINIDB_V2_DATA_START(n) - MINIDB_RECORD_HDRSZ)
		mismatch("V2 length is not V1's plus the directory");
	if (minidb_record_size(vs, n, format) != len)
		mismatch("minidb_record_size says " UINT64_FORMAT ", the record has %u bytes",
				 minidb_record_size(vs, n, format), len);
	{
		/* a write turns it into V3, unless a marker lies below its head */
		bool		inner = false;

		for (i = 1; i < n; i++)
			inner |= (vs[i].flags & MINIDB_V_NODATA_MASK) != 0;
		if (minidb_record_write_format(rec) != (inner ? format : MINIDB_FORMAT_V3))
			mismatch("write_format of a V%d record %s a marker below its head is %d",
					 format, inner ? "with" : "without",
					 minidb_record_write_format(rec));
	}
	minidb_chain_free_all(vs, n);
	minidb_chain_free_all(vs2, n2);
	/* valid: every cut, both walkers; exactly len2 bytes for ASan */
	exact = exact_copy(rec2, len2);
	check_record(exact, len2, seed, true);
	free(exact);
	free(rec2);

	/* optional damage */
	rec = ensure(rec, &cap, len + 64);
	len = damage_record(r, rec, len, cap);
	exact = exact_copy(rec, len);
	check_record(exact, len, seed, true);
	free(exact);
	free(rec);
}

/* ---- the V3 program ---- */

#define M3_MAX_OPS			40
#define M3_MAX_VERSIONS		64
#define M3_SLOTS			(M3_MAX_OPS + 16)
#define M3_MAX_DATA			(56 * 1024)	/* big versions reach the 64 KB limit */
#define M3_BITMAP_ROOM		208 /* BITMAPLEN(1600) rounded up */
#define DAMAGE_TAIL			4	/* the damage byte and its arguments */

/*
 * What a V3 record holds: its data versions (whole), newest first; the
 * row's end; the lockers; a speculative token.  The end is kept as the
 * marker a builder takes (xmin: the xmax; flags: TOMBSTONE or MOVED, with
 * KEYS_UPDATED, XMIN_MULTI, hints).
 */
typedef struct Model3
{
	int			ndata;
	MinidbVersionData v[M3_MAX_VERSIONS + 1];
	int			slots;
	uint8		bitmaps[M3_SLOTS][M3_BITMAP_ROOM];
	char		data[M3_SLOTS][M3_MAX_DATA];
	bool		has_end;
	TransactionId end_xmax;
	uint16		end_flags;
	ItemPointerData succ;		/* a move within the relation */
	bool		moved_part;
	MinidbLockers lk;			/* xid invalid: none (meaningless with an end) */
	uint32		spec;			/* token, or 0 */
} Model3;

static Model3 m3;

/* The record, with room to grow */
typedef struct Rec3
{
	char	   *p;
	uint32		len;
	uint32		cap;
} Rec3;

static void
rec3_reserve(Rec3 *r, uint32 need)
{
	r->p = ensure(r->p, &r->cap, need);
}

/* Replace the record by len bytes of out */
static void
rec3_take(Rec3 *r, const char *out, uint32 len)
{
	rec3_reserve(r, len);
	memcpy(r->p, out, len);
	r->len = len;
}

/*
 * A new data version in a fresh slot, from the program; relative to head.
 * big: now and then whole versions of up to 56 KB, so that records meet the
 * format's 65535-byte limit (V1 and V2 records, which have other limits,
 * are built without them).
 */
static MinidbVersionData
read_data3(Reader *r, const MinidbVersionData *head, bool big)
{
	MinidbVersionData v;
	uint8		vop = next_byte(r);
	uint8		b;
	int			slot = m3.slots++;
	char	   *data = m3.data[slot];
	uint8	   *bitmap = m3.bitmaps[slot];
	uint16		hints[4] = {0, MINIDB_V_XMIN_COMMITTED, MINIDB_V_XMIN_ABORTED,
	MINIDB_V_XMIN_COMMITTED | MINIDB_V_FROZEN};
	int			mode = vop >> 6;

	if (slot >= M3_SLOTS)
		abort();				/* the op loop keeps within the slots */
	memset(&v, 0, sizeof(v));
	v.xmin = FirstNormalTransactionId + next_byte(r);
	v.cid = next_byte(r);
	v.flags = hints[vop & 3];
	if (vop & 0x04)
		v.flags |= MINIDB_V_HASVARWIDTH;
	if (vop & 0x08)
		v.flags |= MINIDB_V_HASEXTERNAL;
	if (vop & 0x10)
		v.flags |= MINIDB_V_COMBOCID;
	/* now and then written by a key update (no bit of vop is left) */
	if ((v.xmin & 3) == 3)
		v.flags |= MINIDB_V_KEYS_UPDATED;
	b = next_byte(r);
	/* mostly a few attributes; now and then a wide null bitmap */
	v.natts = b < 240 ? b % 25 : 100 + (b - 240) * 100;
	if (vop & 0x20)
	{
		if (v.natts == 0)
			v.natts = 1;
		v.flags |= MINIDB_V_HASNULL;
		for (int i = 0; i < MINIDB_BITMAPLEN(v.natts); i++)
			bitmap[i] = (uint8) (next_byte(r) ^ i);
		v.bitmap = bitmap;
	}
	if (head == NULL && mode != 1)
		mode = 1;
	if (mode == 2)
	{
		/* the same data as the head */
		memcpy(data, head->data, head->datalen);
		v.datalen = head->datalen;
	}
	else if (mode == 1)
	{
		/* fresh data: usually nothing shared with the head */
		uint8		b = next_byte(r);
		uint32		len = (big && b >= 0xF8) ? (uint32) (b - 0xF7) * 7000 :
			(uint32) b * 2;
		uint8		s = next_byte(r);

		for (uint32 j = 0; j < len; j++)
			data[j] = (char) (s + j * 31 + (j >> 3));
		v.datalen = len;
	}
	else
	{
		/* the head's prefix and suffix around new bytes: an UPDATE */
		uint32		hl = head->datalen;
		uint32		p = (uint32) next_byte(r) * hl / 255;
		uint32		s = (uint32) next_byte(r) * (hl - p) / 255;
		uint32		mid = next_byte(r) % (mode == 3 ? 160 : 24);

		if (p + s + mid > M3_MAX_DATA)
			mid = M3_MAX_DATA - p - s;
		if (p + s + mid > MINIDB_MAX_VERSION_LEN)
			mid = MINIDB_MAX_VERSION_LEN - p - s;
		memcpy(data, head->data, p);
		for (uint32 j = 0; j < mid; j++)
			data[p + j] = r->len > 0 ? (char) next_byte(r) : (char) (j * 7 + 1);
		memcpy(data + p + mid, head->data + hl - s, s);
		v.datalen = p + mid + s;
	}
	v.data = data;
	return v;
}

/* A row's end from the program: the marker and its successor */
static MinidbVersionData
read_marker3(Reader *r, MinidbRecordEnd *extra, ItemPointerData *succ)
{
	MinidbVersionData m;
	uint8		mop = next_byte(r);
	uint8		hint = (mop >> 5) & 3;

	memset(&m, 0, sizeof(m));
	memset(extra, 0, sizeof(*extra));
	m.cid = next_byte(r);
	if (mop & 0x08)
	{
		/* a MultiXactId: any value but 0 */
		m.flags |= MINIDB_V_XMIN_MULTI;
		m.xmin = 1 + next_byte(r);
	}
	else
		m.xmin = FirstNormalTransactionId + next_byte(r);
	if (mop & 0x10)
		m.flags |= MINIDB_V_COMBOCID;
	if (hint == 1)
		m.flags |= MINIDB_V_XMIN_COMMITTED;
	else if (hint == 2)
		m.flags |= MINIDB_V_XMIN_ABORTED;
	switch (mop & 3)
	{
		case 2:
			{
				/* (ItemPointerSet evaluates its arguments more than once) */
				uint8		blk = next_byte(r);
				uint8		off = next_byte(r);

				m.flags |= MINIDB_V_MOVED;
				ItemPointerSet(succ, blk, 1 + off % 200);
				extra->successor = succ;
				break;
			}
		case 3:
			m.flags |= MINIDB_V_MOVED;
			extra->moved_part = true;
			break;
		default:
			m.flags |= MINIDB_V_TOMBSTONE;
			break;
	}
	if ((m.flags & MINIDB_V_MOVED) && (mop & 0x04))
		m.flags |= MINIDB_V_KEYS_UPDATED;
	return m;
}

/* Lockers from the program (xid invalid: clear them) */
static MinidbLockers
read_lockers(Reader *r)
{
	MinidbLockers lk;
	uint8		b = next_byte(r);

	memset(&lk, 0, sizeof(lk));
	switch (b & 3)
	{
		case 0:
			lk.xid = FirstNormalTransactionId + next_byte(r) * 13;
			lk.mode = MINIDB_LOCK_KEYSHARE + ((b >> 2) & 3);
			break;
		case 1:
			lk.xid = FirstNormalTransactionId + next_byte(r) * 13;
			lk.mode = MINIDB_LOCK_NONE; /* a locker without a mode: key share */
			break;
		case 2:
			lk.xid = 1 + next_byte(r);
			lk.multi = true;
			lk.mode = (b >> 2) % (MINIDB_LOCK_MAX + 1);
			break;
		default:
			lk.xid = InvalidTransactionId;
			break;
	}
	return lk;
}

/* The lockers a record reads back once lk is set */
static MinidbLockers
lockers_as_read(const MinidbLockers *lk)
{
	MinidbLockers out;

	memset(&out, 0, sizeof(out));
	if (!TransactionIdIsValid(lk->xid))
		return out;
	out.xid = lk->xid;
	out.multi = lk->multi;
	out.mode = lk->multi ? MINIDB_LOCK_KEYSHARE : Max(lk->mode, MINIDB_LOCK_KEYSHARE);
	return out;
}

static void
m3_prepend_data(const MinidbVersionData *v)
{
	if (m3.ndata >= M3_MAX_VERSIONS)
		abort();
	memmove(&m3.v[1], &m3.v[0], sizeof(MinidbVersionData) * m3.ndata);
	m3.v[0] = *v;
	m3.ndata++;
}

/* The row ends: the head's cid becomes its cmax (chain.h) */
static void
m3_end(const MinidbVersionData *m, const MinidbRecordEnd *extra)
{
	m3.has_end = true;
	m3.end_xmax = m->xmin;
	m3.end_flags = m->flags & (MINIDB_V_TOMBSTONE | MINIDB_V_MOVED |
							   MINIDB_V_KEYS_UPDATED | MINIDB_V_XMIN_MULTI |
							   MINIDB_V_XMIN_COMMITTED | MINIDB_V_XMIN_ABORTED);
	m3.moved_part = (m->flags & MINIDB_V_MOVED) && extra && extra->moved_part;
	ItemPointerSetInvalid(&m3.succ);
	if ((m->flags & MINIDB_V_MOVED) && !m3.moved_part)
		m3.succ = *extra->successor;
	memset(&m3.lk, 0, sizeof(m3.lk));
	m3.spec = 0;
	if (m3.ndata > 0)
	{
		m3.v[0].cid = m->cid;
		m3.v[0].flags = (m3.v[0].flags & ~MINIDB_V_COMBOCID) |
			(m->flags & MINIDB_V_COMBOCID);
	}
}

/* The end goes (an aborted DELETE or move): a multixact's lockers stay */
static void
m3_drop_end(void)
{
	memset(&m3.lk, 0, sizeof(m3.lk));
	if (m3.end_flags & MINIDB_V_XMIN_MULTI)
	{
		m3.lk.xid = m3.end_xmax;
		m3.lk.multi = true;
		m3.lk.mode = MINIDB_LOCK_KEYSHARE;
	}
	m3.has_end = false;
	m3.moved_part = false;
	ItemPointerSetInvalid(&m3.succ);
}

/* The model after keep[] (indexed as walkers index) */
static void
m3_prune(const bool *keep)
{
	int			base = m3.has_end ? 1 : 0;
	int			kept = 0;

	for (int i = 0; i < m3.ndata; i++)
		if (keep[base + i])
			m3.v[kept++] = m3.v[i];
	m3.ndata = kept;
	if (m3.has_end && !keep[0])
		m3_drop_end();
}

/*
 * The record holds the model: versions (data whole, rebuilt by the
 * reference walker), the end as readers see it, lockers, successor, token.
 */
static void
m3_check(const char *rec, uint32 len, const char *step)
{
	MinidbVersionData *vs;
	MinidbChainError err;
	MinidbLockers lk;
	MinidbLockers want_lk;
	ItemPointerData succ;
	bool		moved_part;
	bool		has_succ;
	int			base = m3.has_end ? 1 : 0;
	int			n;

	if (minidb_record_format_of(rec) != MINIDB_FORMAT_V3)
		mismatch("%s: the record is of format %d", step,
				 minidb_record_format_of(rec));
	if (!minidb_record_validate(rec, len, &err))
		mismatch("%s: the record is invalid: version %d, field %s: %s",
				 step, err.version, err.field, err.detail);
	n = minidb_chain_decode_all(rec, len, &vs, &err);
	if (n != m3.ndata + base || minidb_record_nversions(rec, len) != n)
		mismatch("%s: %d versions decoded, the model has %d data versions%s",
				 step, n, m3.ndata, m3.has_end ? " and an end" : "");
	if (m3.has_end)
	{
		MinidbVersionData want;
		MinidbVersionData got = vs[0];

		memset(&want, 0, sizeof(want));
		want.xmin = m3.end_xmax;
		want.cid = m3.ndata > 0 ? m3.v[0].cid : 0;
		want.flags = MINIDB_V_VIRTUAL | m3.end_flags |
			(m3.ndata > 0 ? m3.v[0].flags & MINIDB_V_COMBOCID : 0);
		if (!minidb_version_equal(&got, &want))
			mismatch("%s: the row's end reads xmax %u cid %u flags 0x%04x, the model has %u, %u, 0x%04x",
					 step, got.xmin, got.cid, got.flags, want.xmin, want.cid,
					 want.flags);
	}
	for (int i = 0; i < m3.ndata; i++)
	{
		MinidbVersionData got = vs[base + i];
		uint16		enc = got.flags & MINIDB_V_ENC_MASK;

		if (enc != MINIDB_V_ENC_FULL && (i == 0 || enc != MINIDB_V_ENC_DELTA))
			mismatch("%s: data version %d has encoding 0x%04x", step, i, enc);
		got.flags &= ~MINIDB_V_ENC_MASK;
		if (!minidb_version_equal(&got, &m3.v[i]))
			mismatch("%s: data version %d differs from the model (xmin %u/%u, cid %u/%u, flags 0x%04x/0x%04x, natts %u/%u, %u/%u bytes)",
					 step, i, got.xmin, m3.v[i].xmin, got.cid, m3.v[i].cid,
					 got.flags, m3.v[i].flags, got.natts, m3.v[i].natts,
					 got.datalen, m3.v[i].datalen);
	}
	minidb_chain_free_all(vs, n);

	/* the record-level fields */
	minidb_record_get_lockers(rec, &lk);
	memset(&want_lk, 0, sizeof(want_lk));
	if (m3.has_end && (m3.end_flags & MINIDB_V_XMIN_MULTI))
	{
		want_lk.xid = m3.end_xmax;
		want_lk.multi = true;
		want_lk.with_updater = true;
		want_lk.mode = MINIDB_LOCK_KEYSHARE;
	}
	else if (!m3.has_end)
		want_lk = lockers_as_read(&m3.lk);
	if (lk.xid != want_lk.xid || lk.multi != want_lk.multi ||
		lk.with_updater != want_lk.with_updater ||
		(TransactionIdIsValid(lk.xid) && lk.mode != want_lk.mode))
		mismatch("%s: lockers %u (mode %u, multi %d, updater %d), the model has %u (mode %u, multi %d, updater %d)",
				 step, lk.xid, lk.mode, lk.multi, lk.with_updater,
				 want_lk.xid, want_lk.mode, want_lk.multi, want_lk.with_updater);
	has_succ = minidb_record_get_successor(rec, &succ, &moved_part);
	if (has_succ != ItemPointerIsValid(&m3.succ) ||
		moved_part != (m3.has_end && m3.moved_part) ||
		(has_succ && memcmp(&succ, &m3.succ, sizeof(succ)) != 0))
		mismatch("%s: successor %d (%u,%u), moved to a partition %d; the model has (%u,%u), %d",
				 step, has_succ, ItemPointerGetBlockNumberNoCheck(&succ),
				 ItemPointerGetOffsetNumberNoCheck(&succ), moved_part,
				 ItemPointerGetBlockNumberNoCheck(&m3.succ),
				 ItemPointerGetOffsetNumberNoCheck(&m3.succ), m3.moved_part);
	if (minidb_record_spec_token(rec) != m3.spec)
		mismatch("%s: speculative token %u, the model has %u", step,
				 minidb_record_spec_token(rec), m3.spec);
}

/* After a step: the model, then the walkers (a few cuts) */
static void
m3_step_check(Rec3 *rec, uint64 seed, const char *step)
{
	char	   *exact = exact_copy(rec->p, rec->len);

	m3_check(exact, rec->len, step);
	check_record(exact, rec->len, seed, false);
	free(exact);
}

/*
 * A write the sizing says would exceed the format's limit (any length
 * past MINIDB_R3_MAX_LEN) must be refused with elog(ERROR), the record untouched: the caller
 * then goes another way (the server would put the row elsewhere).
 */
static void
expect_refusal(Rec3 *rec, const MinidbVersionData *v,
			   const MinidbRecordEnd *extra, const MinidbLockers *lk,
			   const char *step)
{
	char	   *src = exact_copy(rec->p, rec->len);
	char	   *out = malloc(MINIDB_R3_MAX_LEN + 1);
	bool		caught;

	track_begin();
	if (lk)
		MINIDB_SHIM_EXPECT_ERROR(caught, (void) minidb_record_set_lockers(out, MINIDB_R3_MAX_LEN + 1, src, rec->len, lk));
	else
		MINIDB_SHIM_EXPECT_ERROR(caught, (void) minidb_record_prepend_ex(out, MINIDB_R3_MAX_LEN + 1, src, rec->len, v, 0, extra));
	track_end(caught);
	if (!caught)
		mismatch("%s: sizing says the result exceeds the limit, the write did not refuse",
				 step);
	if (memcmp(src, rec->p, rec->len) != 0)
		mismatch("%s: a refused write changed its source", step);
	free(out);
	free(src);
}

/*
 * Write the record rec would become, through the API the server uses:
 * sized first (exactly, and within the upper bound), written out of place
 * from an exact copy or in place.  False when the format's limit refuses.
 */
static bool
m3_prepend(Rec3 *rec, const MinidbVersionData *v, const MinidbRecordEnd *extra,
		   bool in_place, const char *step)
{
	uint32		want = minidb_record_prepend_size_ex(rec->p, rec->len, v, 0,
													 extra);
	uint32		len;

	if (want > MINIDB_R3_MAX_LEN)
	{
		expect_refusal(rec, v, extra, NULL, step);
		return false;
	}
	if (want > MINIDB_R3_MAX_LEN)
		mismatch("%s: the record would take %u bytes", step, want);
	if (want > minidb_record_prepend_size(rec->len, v))
		mismatch("%s: prepend_size %u is not an upper bound of %u", step,
				 minidb_record_prepend_size(rec->len, v), want);
	if (extra == NULL && want != minidb_record_prepend_size_rec(rec->p, rec->len, v))
		mismatch("%s: prepend_size_rec disagrees with prepend_size_ex", step);
	if (in_place)
	{
		rec3_reserve(rec, want);
		len = minidb_record_prepend_ex(rec->p, want, rec->p, rec->len, v, 0,
									   extra);
	}
	else
	{
		char	   *src = exact_copy(rec->p, rec->len);
		char	   *out = malloc(want);

		len = minidb_record_prepend_ex(out, want, src, rec->len, v, 0,
									   extra);
		rec3_take(rec, out, len);
		free(out);
		free(src);
	}
	if (len != want)
		mismatch("%s: prepend wrote %u bytes, its size said %u", step, len, want);
	rec->len = len;
	return true;
}

/*
 * Prepend v (a data version, or a marker with extra) both ways
 * minidb_prepend_build may: to the pruned record, and with
 * minidb_record_prepend_newest to the record before pruning (from an
 * exact copy, so that AddressSanitizer sees any read past it), which must
 * give the same bytes.
 */
static void
m3_same_prepend(const char *before, uint32 beforelen, int nnewest,
				const char *pruned, uint32 prunedlen,
				const MinidbVersionData *v, const MinidbRecordEnd *extra,
				const char *step)
{
	uint32		want = minidb_record_prepend_size_ex(pruned, prunedlen, v, 0,
													 extra);
	uint32		bound = minidb_record_prepend_size(beforelen, v);
	char	   *a;
	char	   *b;
	uint32		lena;
	uint32		lenb;

	if (want > MINIDB_R3_MAX_LEN)
		return;					/* refused either way: expect_refusal's */
	if (want > bound)
		mismatch("%s: the prepend bound of the unpruned record, %u, is under the pruned record's %u",
				 step, bound, want);
	a = malloc(want);
	b = malloc(bound);
	lena = minidb_record_prepend_ex(a, want, pruned, prunedlen, v, 0, extra);
	lenb = minidb_record_prepend_newest(b, bound, before, beforelen, nnewest,
										v, extra);
	if (lena != lenb || memcmp(a, b, lena) != 0)
		mismatch("%s: prepend onto the newest %d versions gave %u bytes, onto the pruned record %u%s",
				 step, nnewest, lenb, lena, lena == lenb ? ", not the same" : "");
	free(a);
	free(b);
}

/*
 * keep[] keeps the newest versions and drops the older ones: the pruned
 * record is no longer (minidb_prune_plan does not size it), and prepending to
 * the record with minidb_record_prepend_newest gives what prepending to the
 * pruned one gives (minidb_prepend_build does not prune first).
 */
static void
m3_check_kept_newest(const char *before, uint32 beforelen, const bool *keep,
					 bool fits, const char *pruned, uint32 prunedlen,
					 const char *step)
{
	int			total = m3.ndata + (m3.has_end ? 1 : 0);
	int			k = 0;
	int			nnewest;
	bool		newest = true;
	MinidbVersionData v;
	MinidbVersionData m;
	MinidbRecordEnd extra;
	ItemPointerData succ;

	while (k < total && keep[k])
		k++;
	for (int i = k; i < total; i++)
		newest &= !keep[i];
	newest &= k > 0;
	if (newest && !fits)
		mismatch("%s: prune_fits refuses to drop the %d oldest versions",
				 step, total - k);
	nnewest = minidb_record_kept_newest(before, beforelen, keep);
	if (nnewest != ((newest && !m3.has_end) ? k : 0))
		mismatch("%s: kept_newest says %d, keep[] keeps the newest %d of %d%s",
				 step, nnewest, newest ? k : 0, total,
				 m3.has_end ? " (the row has ended)" : "");
	if (nnewest == 0 || prunedlen == 0)
		return;

	/* an UPDATE: the head again, by a later transaction */
	v = m3.v[0];
	v.xmin = m3.v[0].xmin + 1;
	if (!TransactionIdIsNormal(v.xmin))
		v.xmin = FirstNormalTransactionId;
	m3_same_prepend(before, beforelen, nnewest, pruned, prunedlen, &v, NULL,
					step);
	/* ... past lockers that all ended */
	memset(&extra, 0, sizeof(extra));
	extra.drop_lockers = true;
	m3_same_prepend(before, beforelen, nnewest, pruned, prunedlen, &v, &extra,
					step);
	/* a DELETE, and a move */
	memset(&m, 0, sizeof(m));
	memset(&extra, 0, sizeof(extra));
	m.xmin = v.xmin;
	m.cid = 3;
	m.flags = MINIDB_V_TOMBSTONE;
	m3_same_prepend(before, beforelen, nnewest, pruned, prunedlen, &m, NULL,
					step);
	m.flags = MINIDB_V_MOVED | MINIDB_V_KEYS_UPDATED;
	ItemPointerSet(&succ, 7, 3);
	extra.successor = &succ;
	m3_same_prepend(before, beforelen, nnewest, pruned, prunedlen, &m,
					&extra, step);
}

/* keep[]: prune, checking that prune_fits told the truth */
static void
m3_prune_checked(Rec3 *rec, const bool *keep, bool must_fit, uint64 seed,
				 const char *step)
{
	bool		fits = minidb_record_prune_fits(rec->p, rec->len, keep);
	char	   *before = exact_copy(rec->p, rec->len);
	char	   *work = exact_copy(rec->p, rec->len);
	volatile uint32 newlen = 0;
	bool		caught;

	if (must_fit && !fits)
		mismatch("%s: prune_fits refuses a prune the server makes", step);
	track_begin();
	MINIDB_SHIM_EXPECT_ERROR(caught, newlen = minidb_record_prune(work, rec->len, keep));
	track_end(caught);
	if (fits)
	{
		if (caught)
			mismatch("%s: prune_fits says it fits, prune refused: %s", step,
					 minidb_shim_last_error);
		if (newlen == 0 || newlen > rec->len)
			mismatch("%s: prune that fits gave %u bytes from %u", step,
					 newlen, rec->len);
		m3_check_kept_newest(before, rec->len, keep, fits, work, newlen,
							 step);
		rec3_take(rec, work, newlen);
		m3_prune(keep);
	}
	else
	{
		m3_check_kept_newest(before, rec->len, keep, fits, NULL, 0, step);
		if (!caught || strstr(minidb_shim_last_error, "would grow") == NULL)
			mismatch("%s: prune_fits says no, prune %s", step,
					 caught ? minidb_shim_last_error : "succeeded");
		if (memcmp(work, before, rec->len) != 0)
			mismatch("%s: a refused prune changed the record", step);
	}
	free(before);
	free(work);
	m3_step_check(rec, seed, step);
}

/* Set (or clear) the lockers, sized first; in place when the size holds */
static void
m3_set_lockers(Rec3 *rec, const MinidbLockers *lk, bool in_place, uint64 seed)
{
	uint32		want = minidb_record_set_lockers_size(rec->p, rec->len, lk);
	uint32		len;

	if (want > MINIDB_R3_MAX_LEN)
	{
		/* only a record within the reserve of the limit */
		if (!TransactionIdIsValid(lk->xid) ||
			rec->len + MINIDB_SLOT_RESERVE <= MINIDB_R3_MAX_LEN)
			mismatch("a row lock on a record of %u bytes exceeds the format's limit",
					 rec->len);
		expect_refusal(rec, NULL, NULL, lk, "set_lockers");
		return;
	}
	if (TransactionIdIsValid(lk->xid) && want > rec->len + MINIDB_SLOT_RESERVE)
		mismatch("a row lock grows the record from %u to %u bytes, more than the reserve",
				 rec->len, want);
	if (want == rec->len && in_place)
		len = minidb_record_set_lockers(rec->p, rec->len, rec->p, rec->len, lk);
	else
	{
		char	   *src = exact_copy(rec->p, rec->len);
		char	   *out = malloc(want);

		len = minidb_record_set_lockers(out, want, src, rec->len, lk);
		rec3_take(rec, out, len);
		free(out);
		free(src);
	}
	if (len != want)
		mismatch("set_lockers wrote %u bytes, its size said %u", len, want);
	rec->len = len;
	if (m3.has_end)
	{
		/* the end goes (it aborted), with a move's successor */
		m3.has_end = false;
		m3.moved_part = false;
		ItemPointerSetInvalid(&m3.succ);
	}
	m3.lk = *lk;
	m3_step_check(rec, seed, "set_lockers");
}

/*
 * The record's starting point: built in V3 (with a token or lockers), or
 * built in V1/V2, updated there, and turned into V3 by a write
 * (minidb_record_prepend_ex(..., MINIDB_FORMAT_V3, ...)).
 */
static void
m3_start(Reader *r, Rec3 *rec, uint64 seed)
{
	uint8		origin = next_byte(r);
	int			format = (origin & 3) == 2 ? MINIDB_FORMAT_V1 :
		(origin & 3) == 3 ? MINIDB_FORMAT_V2 : MINIDB_FORMAT_V3;
	MinidbVersionData v = read_data3(r, NULL, (origin & 3) < 2);
	MinidbRecordEnd extra;
	ItemPointerData tok;
	MinidbLockers lk;
	uint32		len;
	uint32		want;

	memset(&extra, 0, sizeof(extra));
	memset(&lk, 0, sizeof(lk));
	if (format != MINIDB_FORMAT_V3)
		v.flags &= ~MINIDB_V_COMBOCID;	/* V1 and V2 have no combo cids */
	if (origin & 0x10)
	{
		/* a speculative insertion (heap's token offset, for V1/V2) */
		m3.spec = 1 + next_byte(r);
		ItemPointerSet(&tok, m3.spec, 0xfffe);
		extra.successor = &tok;
		extra.spec = true;
	}
	if (origin & 0x20)
	{
		lk = read_lockers(r);
		m3.lk = lk;
		/* at the build, or (V1, V2) in the header afterwards */
		if (format == MINIDB_FORMAT_V3 || !(origin & 0x40))
			extra.lockers = &lk;
	}
	want = minidb_record_build_ex(NULL, 0, &v, format, &extra);
	rec3_reserve(rec, want);
	len = minidb_record_build_ex(rec->p, want, &v, format, &extra);
	if (len != want)
		mismatch("build_ex wrote %u bytes, its size said %u", len, want);
	rec->len = len;
	if ((origin & 0x20) && extra.lockers == NULL)
	{
		if (minidb_record_set_lockers_size(rec->p, len, &lk) != len ||
			minidb_record_set_lockers(rec->p, len, rec->p, len, &lk) != len)
			mismatch("set_lockers changed the length of a V%d record", format);
	}
	m3_prepend_data(&v);
	if (format == MINIDB_FORMAT_V3)
	{
		m3_step_check(rec, seed, "build");
		return;
	}

	/* updates in the old format, then the write that converts */
	{
		int			k = next_byte(r) % 8;
		uint8		c;
		MinidbVersionData *vs;
		MinidbChainError err;
		int			n;

		for (int i = 0; i < k; i++)
		{
			v = read_data3(r, &m3.v[0], false);
			v.flags &= ~MINIDB_V_COMBOCID;
			rec3_reserve(rec, minidb_record_prepend_size_rec(rec->p, rec->len, &v));
			rec->len = minidb_record_prepend(rec->p, rec->cap, rec->p, rec->len, &v);
			m3_prepend_data(&v);
		}
		n = minidb_chain_decode_all(rec->p, rec->len, &vs, &err);
		if (n != m3.ndata)
			mismatch("V%d record before the conversion: %d versions, the model has %d",
					 format, n, m3.ndata);
		for (int i = 0; i < n; i++)
			if (!minidb_version_equal(&vs[i], &m3.v[i]))
				mismatch("V%d record before the conversion: version %d differs from the model",
						 format, i);
		minidb_chain_free_all(vs, n);
		if (minidb_record_write_format(rec->p) != MINIDB_FORMAT_V3)
			mismatch("a V%d record without markers is not written as V3",
					 format);

		c = next_byte(r);
		if (c & 2)
		{
			/*
			 * A DELETE or a move in the old format that aborted: its marker
			 * is the head, which the writer prunes before it converts the
			 * record (V3 holds an end only in its header), but sizes the
			 * conversion with it still there.  With or without the aborted
			 * hint, which the record layer does not go by.
			 */
			MinidbVersionData am;
			MinidbRecordEnd aextra;
			ItemPointerData asucc;

			memset(&am, 0, sizeof(am));
			memset(&aextra, 0, sizeof(aextra));
			am.xmin = FirstNormalTransactionId + 300;
			am.cid = c >> 4;
			/* (no move of a speculative insertion, whose token it would hide) */
			am.flags = (c & 4) && m3.spec == 0 ? MINIDB_V_MOVED :
				MINIDB_V_TOMBSTONE;
			if (c & 8)
				am.flags |= MINIDB_V_XMIN_ABORTED;
			if (am.flags & MINIDB_V_MOVED)
			{
				ItemPointerSet(&asucc, 7, 3);
				aextra.successor = &asucc;
			}
			rec3_reserve(rec, minidb_record_prepend_size_ex(rec->p, rec->len,
															&am, 0, &aextra));
			rec->len = minidb_record_prepend_ex(rec->p, rec->cap, rec->p,
												rec->len, &am, 0, &aextra);
			if (minidb_record_write_format(rec->p) != MINIDB_FORMAT_V3)
				mismatch("a V%d record with an aborted end at its head is not written as V3",
						 format);
		}
		memset(&extra, 0, sizeof(extra));
		if (c & 1)
		{
			/* a DELETE or a move converts it */
			MinidbVersionData m = read_marker3(r, &extra, &tok);

			v = m;
			m3_end(&m, &extra);
		}
		else
		{
			v = read_data3(r, &m3.v[0], false);
			m3_prepend_data(&v);
		}
		want = minidb_record_prepend_size_ex(rec->p, rec->len, &v,
											 MINIDB_FORMAT_V3, &extra);
		{
			char	   *src = exact_copy(rec->p, rec->len);
			char	   *out = malloc(want);
			uint32		srclen = rec->len;

			if (c & 2)
			{
				/* the writer's pruning of the aborted end */
				bool		keep[MAX_PROGRAM_VERSIONS + 2];

				memset(keep, true, sizeof(keep));
				keep[0] = false;
				srclen = minidb_record_prune(src, srclen, keep);
			}
			len = minidb_record_prepend_ex(out, want, src, srclen, &v,
										   MINIDB_FORMAT_V3, &extra);
			rec3_take(rec, out, len);
			free(out);
			free(src);
		}
		if (len != want)
			mismatch("conversion wrote %u bytes, its size said %u", len, want);
		m3_step_check(rec, seed, "conversion to V3");
	}
}

static void
run_program_v3(Reader *r, uint64 seed)
{
	Rec3		rec = {NULL, 0, 0};
	char	   *exact;
	Reader		tail;

	/*
	 * The last DAMAGE_TAIL bytes say how to damage the result, whatever
	 * the program before them consumes (a mutation there changes only the
	 * damage; the planted-bug run relies on that to find damage quickly).
	 */
	tail.len = Min(r->len, DAMAGE_TAIL);
	tail.p = r->p + r->len - tail.len;
	r->len -= tail.len;

	memset(&m3.v, 0, sizeof(m3.v));
	m3.ndata = 0;
	m3.slots = 0;
	m3.has_end = false;
	m3.end_xmax = InvalidTransactionId;
	m3.end_flags = 0;
	ItemPointerSetInvalid(&m3.succ);
	m3.moved_part = false;
	memset(&m3.lk, 0, sizeof(m3.lk));
	m3.spec = 0;

	m3_start(r, &rec, seed);

	for (int step = 0; step < M3_MAX_OPS && r->len > 0 && m3.ndata > 0; step++)
	{
		uint8		op = next_byte(r);
		bool		keep[M3_MAX_VERSIONS + 2];
		int			total = m3.ndata + (m3.has_end ? 1 : 0);

		switch (op & 7)
		{
			case 0:
			case 1:
			case 7:
				{
					/*
					 * an UPDATE: a new version (after an aborted end goes);
					 * with 0x10, past lockers that all ended, which go
					 */
					MinidbVersionData v;
					MinidbRecordEnd drop;
					bool		dropping = (op & 0x10) != 0;

					if (m3.ndata >= M3_MAX_VERSIONS || m3.slots >= M3_SLOTS - 1)
						break;
					if (m3.has_end)
					{
						memset(keep, true, sizeof(keep));
						keep[0] = false;
						m3_prune_checked(&rec, keep, true, seed, "aborted end before an update");
					}
					v = read_data3(r, &m3.v[0], true);
					memset(&drop, 0, sizeof(drop));
					drop.drop_lockers = true;
					if (!m3_prepend(&rec, &v, dropping ? &drop : NULL,
									(op & 0x08) != 0, "update"))
						break;
					m3_prepend_data(&v);
					if (dropping)
						memset(&m3.lk, 0, sizeof(m3.lk));
					m3_step_check(&rec, seed, "update");
					break;
				}
			case 2:
				{
					/* a DELETE or a move ends the row */
					MinidbRecordEnd extra;
					ItemPointerData succ;
					MinidbVersionData m;
					uint32		before;

					if (m3.has_end)
					{
						memset(keep, true, sizeof(keep));
						keep[0] = false;
						m3_prune_checked(&rec, keep, true, seed, "aborted end before an end");
					}
					before = rec.len;
					m = read_marker3(r, &extra, &succ);
					if (!m3_prepend(&rec, &m, &extra, (op & 0x08) != 0, "end"))
					{
						/* only a record within the reserve of the limit */
						if (before + MINIDB_SLOT_RESERVE <= MINIDB_R3_MAX_LEN)
							mismatch("ending a row of %u bytes exceeds the format's limit",
									 before);
						break;
					}
					if (rec.len > before + MINIDB_SLOT_RESERVE)
						mismatch("ending the row grew the record from %u to %u bytes, more than the reserve",
								 before, rec.len);
					m3_end(&m, &extra);
					m3_step_check(&rec, seed, "end");
					break;
				}
			case 3:
				{
					/* row lockers: set, replace or clear */
					MinidbLockers lk = read_lockers(r);

					m3_set_lockers(&rec, &lk, (op & 0x08) == 0, seed);
					break;
				}
			case 4:
				{
					/* a prune the server makes */
					uint8		b = next_byte(r);
					int			base = m3.has_end ? 1 : 0;
					bool		any = false;

					memset(keep, true, sizeof(keep));
					if ((b & 3) == 0 || (b & 3) == 3)
					{
						/* the oldest versions go (at least one item stays) */
						int			k = 1 + (b >> 2) % total;

						for (int i = k; i < total; i++)
							keep[i] = false;
						any = k < total;
					}
					if ((b & 3) == 1 && !m3.has_end && m3.ndata >= 2)
					{
						/* an aborted head */
						keep[0] = false;
						any = true;
					}
					if (((b & 3) == 2 || (b & 3) == 3) && m3.has_end &&
						m3.ndata >= 1 && keep[base])
					{
						/* an aborted end */
						keep[0] = false;
						any = true;
					}
					if (any)
						m3_prune_checked(&rec, keep, true, seed, "server prune");
					break;
				}
			case 5:
				{
					/* any keep[]: prune_fits must tell the truth */
					uint8		mask[8];
					int			kept = 0;

					for (int i = 0; i < 8; i++)
						mask[i] = next_byte(r);
					for (int i = 0; i < total; i++)
					{
						keep[i] = (mask[(i / 8) % 8] >> (i % 8)) & 1;
						kept += keep[i];
					}
					if (kept == 0 && (op & 0x08))
					{
						/* nothing kept: no record (the caller removes it) */
						if (!minidb_record_prune_fits(rec.p, rec.len, keep) ||
							minidb_record_prune(rec.p, rec.len, keep) != 0)
							mismatch("pruning every version leaves a record");
						free(rec.p);
						return;
					}
					if (kept == 0)
						keep[total - 1] = true;
					m3_prune_checked(&rec, keep, false, seed, "any prune");
					break;
				}
			default:
				{
					/* record-level changes in place */
					uint8		b = next_byte(r);

					switch (b % 6)
					{
						case 0:
							/* the speculative insertion is confirmed */
							minidb_record_clear_spec(rec.p, rec.len);
							m3.spec = 0;
							m3_step_check(&rec, seed, "clear_spec");
							break;
						case 1:
							if (m3.has_end &&
								!(m3.end_flags & (MINIDB_V_XMIN_COMMITTED |
												  MINIDB_V_XMIN_ABORTED)))
							{
								/* a reader hints the end, through its marker */
								Predicate	p;
								MinidbVersionRef ref;
								MinidbChainError err;
								uint16		hint = (b & 0x40) ?
									MINIDB_V_XMIN_ABORTED : MINIDB_V_XMIN_COMMITTED;

								memset(&p, 0, sizeof(p));
								p.nversions = total;
								p.oldest_k = total;
								if (minidb_chain_find_visible(rec.p, rec.len, predicate,
															  &p, &ref, &err) != 0 ||
									!is_virtual(&ref))
									mismatch("the row's end is not version 0");
								minidb_virtual_set_hint(ref.vh, hint);
								m3.end_flags |= hint;
								m3_step_check(&rec, seed, "hint on the end");
							}
							break;
						case 2:
							if (m3.has_end)
							{
								/* VACUUM: a multixact's updater replaces it */
								TransactionId xid = FirstNormalTransactionId + next_byte(r);

								minidb_record_set_end_xid(rec.p, rec.len, xid);
								m3.end_xmax = xid;
								m3.end_flags &= ~(MINIDB_V_XMIN_MULTI |
												  MINIDB_V_XMIN_COMMITTED |
												  MINIDB_V_XMIN_ABORTED);
								m3_step_check(&rec, seed, "set_end_xid");
							}
							break;
						case 3:
							if (m3.has_end && (m3.end_flags & MINIDB_V_MOVED))
							{
								/* the move becomes a deletion */
								uint32		len = minidb_record_forget_successor(rec.p, rec.len);

								if (len != rec.len)
									mismatch("forget_successor changed the length");
								m3.end_flags = (m3.end_flags &
												~(MINIDB_V_MOVED | MINIDB_V_KEYS_UPDATED)) |
									MINIDB_V_TOMBSTONE;
								m3.moved_part = false;
								ItemPointerSetInvalid(&m3.succ);
								m3_step_check(&rec, seed, "forget_successor");
							}
							break;
						case 4:
							if (ItemPointerIsValid(&m3.succ))
							{
								ItemPointerData succ;
								uint8		blk = next_byte(r);
								uint8		off = next_byte(r);

								ItemPointerSet(&succ, blk, 1 + off % 200);
								minidb_record_patch_successor(rec.p, rec.len, &succ);
								m3.succ = succ;
								m3_step_check(&rec, seed, "patch_successor");
							}
							break;
						default:
							break;
					}
					break;
				}
		}
	}

	/* the whole set of cuts on the result, then the damage */
	exact = exact_copy(rec.p, rec.len);
	m3_check(exact, rec.len, "the program's result");
	check_record(exact, rec.len, seed, true);
	free(exact);
	rec3_reserve(&rec, rec.len + 64);
	rec.len = damage_record(&tail, rec.p, rec.len, rec.cap);
	exact = exact_copy(rec.p, rec.len);
	check_record(exact, rec.len, seed, true);
	free(exact);
	free(rec.p);
}

int			LLVMFuzzerInitialize(int *argc, char ***argv);
int			LLVMFuzzerTestOneInput(const uint8 *data, size_t size);

/* at exit: how often the newest reader's shortcut was exercised */
static void
report_single_plain(void)
{
	fprintf(stderr, "minidb: single_plain accepted %llu records\n",
			(unsigned long long) single_plain_hits);
	fprintf(stderr, "minidb: newest_plain accepted %llu records, %llu of two versions or more\n",
			(unsigned long long) newest_plain_hits,
			(unsigned long long) newest_plain_multi);
	fprintf(stderr, "minidb: newest_locked accepted %llu records, %llu of two versions or more\n",
			(unsigned long long) newest_locked_hits,
			(unsigned long long) newest_locked_multi);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	atexit(report_single_plain);
	clock_gettime(CLOCK_MONOTONIC, &fuzz_start);
	__sanitizer_install_malloc_and_free_hooks(track_malloc, track_free);
	/* builders follow the GUC; V3 is the default, say it anyway */
	minidb_record_format = MINIDB_FORMAT_V3;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8 *data, size_t size)
{
	uint64		seed = 0;
	Reader		r;
	size_t		i;

	fuzz_execs++;
	if (size < 9)
		return 0;
	for (i = 0; i < 8; i++)
		seed = seed << 8 | data[1 + i];
	r.p = data + 9;
	r.len = size - 9;
	hook_wanted = (data[0] & 0x10) != 0;

	if (data[0] & 1)
	{
		switch ((data[0] >> 1) & 3)
		{
			case 0:
				run_program(&r, seed, MINIDB_FORMAT_V1);
				break;
			case 1:
				run_program(&r, seed, MINIDB_FORMAT_V2);
				break;
			default:
				run_program_v3(&r, seed);
				break;
		}
	}
	else
	{
		/* exactly r.len bytes: ASan catches a read one past the record */
		char	   *rec = exact_copy((const char *) r.p, (uint32) r.len);

		check_record(rec, (uint32) r.len, seed, true);
		free(rec);
	}
	return 0;
}
