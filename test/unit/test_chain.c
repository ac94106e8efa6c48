/*-------------------------------------------------------------------------
 *
 * test_chain.c
 *	  Unit tests of chain.c, run outside the server (make unittest).
 *
 * Output is TAP: one "ok N - ..." or "not ok N - ..." line per assertion,
 * then a plan line; the exit status is non-zero when any assertion failed.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres_fe.h"

#include "chain_shim.h"
#include "access/transam.h"
#include "chain.h"

static int	ntests = 0;
static int	nfailed = 0;

/* The record format the tests build (every test runs once per format) */
static int	cur_format = MINIDB_FORMAT_V1;
#define FMT_NAME (cur_format == MINIDB_FORMAT_V2 ? "v2" : "v1")

static bool
ok(bool cond, const char *fmt,...) pg_attribute_printf(2, 3);

static bool
ok(bool cond, const char *fmt,...)
{
	va_list		ap;

	ntests++;
	if (!cond)
		nfailed++;
	printf("%sok %d - [%s] ", cond ? "" : "not ", ntests, FMT_NAME);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	return cond;
}

/* A record buffer: MAXALIGNed by malloc */
typedef struct Buf
{
	char	   *p;
	uint32		size;
	uint32		len;
} Buf;

static Buf
buf_new(uint32 size)
{
	Buf			b;

	b.p = palloc0(size);
	b.size = size;
	b.len = 0;
	return b;
}

/* Version i of our model chains: data "v<i>" padded to a length */
static MinidbVersionData
model_version(int i, char *space)
{
	MinidbVersionData v;
	static const bits8 bitmap[2] = {0x05, 0x01};

	memset(&v, 0, sizeof(v));
	v.xmin = FirstNormalTransactionId + i;
	v.cid = i % 7;
	v.flags = MINIDB_V_XMIN_COMMITTED;
	v.natts = 1;
	snprintf(space, 64, "value-%d", i);
	v.data = space;
	v.datalen = strlen(space) % 2 ? (uint32) strlen(space) : (uint32) strlen(space) + 1;
	if (i % 5 == 3)
	{
		/* a version with a null bitmap and 9 attributes */
		v.flags |= MINIDB_V_HASNULL;
		v.natts = 9;
		v.bitmap = bitmap;
	}
	if (i % 11 == 10)
	{
		/* a tombstone in the middle of a chain (its delete aborted) */
		v.flags = MINIDB_V_TOMBSTONE | MINIDB_V_XMIN_ABORTED;
		v.natts = 0;
		v.bitmap = NULL;
		v.data = NULL;
		v.datalen = 0;
	}
	return v;
}

#include "ordered_check.h"
#include "single_plain_check.h"

/* Does the record hold exactly model versions idx[0..n-1], newest first? */
static bool
record_matches(const char *rec, uint32 len, const int *idx, int n)
{
	MinidbVersionData *vs;
	MinidbChainError err;
	int			got = minidb_chain_decode_all(rec, len, &vs, &err);
	bool		same = (got == n);
	int			i;

	if (got < 0)
		printf("# decode_all: version %d, field %s: %s\n",
			   err.version, err.field, err.detail);
	for (i = 0; same && i < n; i++)
	{
		char		space[64];
		MinidbVersionData m = model_version(idx[i], space);

		same = minidb_version_equal(&vs[i], &m);
		if (!same)
			printf("# version %d differs from model %d\n", i, idx[i]);
	}
	if (got > 0)
		minidb_chain_free_all(vs, got);
	return same;
}

/* Iterate with the fast walker's iterator; compare with decode_all */
static bool
iterator_matches_reference(char *rec, uint32 len)
{
	MinidbVersionData *vs;
	MinidbChainError err;
	MinidbChainIter it;
	MinidbVersionRef ref;
	bool		damaged;
	int			n = minidb_chain_decode_all(rec, len, &vs, &err);
	int			seen = 0;
	bool		same = true;

	if (n < 0 || !minidb_chain_iter_init(&it, rec, len, &err))
		return false;
	while (minidb_chain_iter_next(&it, &ref, &err, &damaged))
	{
		MinidbVersionData fv;

		minidb_version_get(rec, &ref, &fv);
		if (ref.index != seen || seen >= n ||
			!minidb_version_equal(&fv, &vs[seen]) ||
			minidb_version_size(&vs[seen]) != minidb_ref_size(&ref))
			same = false;
		seen++;
	}
	minidb_chain_free_all(vs, n);
	return same && !damaged && seen == n;
}

/* ---- visibility predicates ---- */

typedef struct Cut
{
	int			nversions;
	int			oldest_k;		/* sees the oldest k versions */
	uint64		skip;			/* bit i%64: skip version i (aborted etc.) */
} Cut;

static bool
cut_visible(MinidbVersionHeader *vh, int index, void *arg)
{
	Cut		   *c = (Cut *) arg;

	if (c->skip & (UINT64CONST(1) << (index % 64)))
		return false;
	return index >= c->nversions - c->oldest_k;
}

static bool
never_visible(MinidbVersionHeader *vh, int index, void *arg)
{
	(*(int *) arg)++;
	return false;
}

static int
reference_pick(const char *rec, uint32 len, Cut *c)
{
	MinidbVersionData *vs;
	MinidbChainError err;
	int			n = minidb_chain_decode_all(rec, len, &vs, &err);
	int			r;

	if (n < 0)
		return -2;
	r = minidb_chain_pick_visible(vs, n, cut_visible, c);
	minidb_chain_free_all(vs, n);
	return r;
}

/* Both walkers agree for every cut k = 0..n and a few skip masks */
static bool
walkers_agree_on_all_cuts(char *rec, uint32 len, int n)
{
	static const uint64 skips[] = {0, 0x1, 0x5555555555555555, UINT64CONST(0x8000000000000001), ~UINT64CONST(0)};
	int			s;
	int			k;

	for (s = 0; s < lengthof(skips); s++)
		for (k = 0; k <= n; k++)
		{
			Cut			c = {n, k, skips[s]};
			MinidbVersionRef ref;
			MinidbChainError err;
			int			fast = minidb_chain_find_visible(rec, len, cut_visible, &c, &ref, &err);

			if (fast != reference_pick(rec, len, &c))
				return false;
			if (fast >= 0 && ref.index != fast)
				return false;
		}
	return true;
}

/* ---- tests ---- */

static void
test_build_one(void)
{
	Buf			b = buf_new(256);
	char		space[64];
	MinidbVersionData v = model_version(0, space);
	MinidbChainError err;
	int			idx[1] = {0};
	MinidbRecordHeader *hdr;

	b.len = minidb_record_build(b.p, b.size, &v);
	hdr = minidb_record_header(b.p);
	ok(b.len == MINIDB_RECORD_HDRSZ + minidb_version_size(&v),
	   "build: length is header + version size (%u)", b.len);
	ok(hdr->rh_format == cur_format && hdr->rh_nversions == 1 &&
	   hdr->rh_len == b.len && hdr->rh_lockmode == MINIDB_LOCK_NONE &&
	   hdr->rh_locker == InvalidTransactionId &&
	   !ItemPointerIsValid(&hdr->rh_successor),
	   "build: record header fields");
	ok(minidb_record_validate(b.p, b.len, &err), "build: record validates");
	ok(record_matches(b.p, b.len, idx, 1), "build: reference walker returns the version");
	ok(iterator_matches_reference(b.p, b.len), "build: iterator agrees with reference");
	ok(walkers_agree_on_all_cuts(b.p, b.len, 1), "build: walkers agree on every cut");
	pfree(b.p);
}

static void
test_build_markers(void)
{
	Buf			b = buf_new(256);
	MinidbVersionData v;
	MinidbChainError err;
	MinidbRecordHeader *hdr;
	char		space[64];
	MinidbVersionData d = model_version(1, space);

	memset(&v, 0, sizeof(v));
	v.xmin = 900;
	v.flags = MINIDB_V_TOMBSTONE;
	b.len = minidb_record_build(b.p, b.size, &d);
	b.len = minidb_record_prepend(b.p, b.size, b.p, b.len, &v);
	ok(minidb_record_validate(b.p, b.len, &err), "tombstone on top of a version validates");

	v.flags = MINIDB_V_MOVED;
	b.len = minidb_record_build(b.p, b.size, &d);
	b.len = minidb_record_prepend(b.p, b.size, b.p, b.len, &v);
	ok(!minidb_record_validate(b.p, b.len, &err) &&
	   strcmp(err.field, "rh_successor") == 0,
	   "moved head without successor is refused (rh_successor)");
	hdr = minidb_record_header(b.p);
	ItemPointerSet(&hdr->rh_successor, 7, 3);
	ok(minidb_record_validate(b.p, b.len, &err), "moved head with successor validates");

	v.flags = MINIDB_V_XMIN_COMMITTED;	/* a version without attributes */
	b.len = minidb_record_build(b.p, b.size, &v);
	ok(b.len == MINIDB_RECORD_HDRSZ + MINIDB_V1_VERSION_HDRSZ &&
	   minidb_record_validate(b.p, b.len, &err),
	   "zero-attribute version (CREATE TABLE t ()) validates");
	pfree(b.p);
}

static void
test_prepend_long(void)
{
	const int	nmax = 1000;
	Buf			b = buf_new(128 * 1024);
	Buf			c = buf_new(128 * 1024);
	int		   *idx = palloc(sizeof(int) * nmax);
	char		space[64];
	bool		all_valid = true;
	bool		all_match = true;
	bool		out_of_place_same = true;
	bool		ordered = true;
	bool		few = true;
	int			n;

	{
		MinidbVersionData v = model_version(0, space);

		b.len = minidb_record_build(b.p, b.size, &v);
	}
	for (n = 1; n < nmax; n++)
	{
		MinidbVersionData v = model_version(n, space);
		MinidbChainError err;
		uint32		want = minidb_record_prepend_size_rec(b.p, b.len, &v);

		if (want > minidb_record_prepend_size(b.len, &v))
			out_of_place_same = false;	/* the bound must hold */

		/* out of place into c, in place in b: same bytes */
		c.len = minidb_record_prepend(c.p, c.size, b.p, b.len, &v);
		b.len = minidb_record_prepend(b.p, b.size, b.p, b.len, &v);
		if (b.len != want || c.len != b.len || memcmp(b.p, c.p, b.len) != 0)
			out_of_place_same = false;
		if (!minidb_record_validate(b.p, b.len, &err))
		{
			printf("# %d versions: version %d, field %s: %s\n", n + 1,
				   err.version, err.field, err.detail);
			all_valid = false;
		}
		if (n < 70 || n % 97 == 0 || n == nmax - 1)
		{
			bool		f;

			ordered &= ordered_agrees(b.p, b.len, (uint32) n, &f);
			few &= f;
		}
		if (n % 97 == 0 || n == nmax - 1)
		{
			int			i;

			for (i = 0; i <= n; i++)
				idx[i] = n - i;
			if (!record_matches(b.p, b.len, idx, n + 1))
				all_match = false;
		}
	}
	ok(all_valid, "prepend: every chain up to %d versions validates", nmax);
	ok(out_of_place_same, "prepend: in place and out of place give the same bytes");
	ok(ordered, "prepend: the ordered walker (search) returns the linear walk's version, and leaves the same version passed over, for every snapshot model of chains up to %d versions", nmax);
	ok(few, "prepend: the oldest reader of a hinted chain asks O(log n) questions (V2; V1 walks)");
	ok(all_match, "prepend: reference walker returns every version, newest first");
	ok(minidb_record_header(b.p)->rh_nversions == nmax,
	   "prepend: rh_nversions is %d", nmax);
	ok(iterator_matches_reference(b.p, b.len),
	   "prepend: iterator agrees with reference on %d versions", nmax);
	ok(walkers_agree_on_all_cuts(b.p, b.len, nmax),
	   "prepend: walkers agree on every cut of %d versions", nmax);
	{
		int			calls = 0;
		MinidbChainError err;

		ok(minidb_chain_find_visible(b.p, b.len, never_visible, &calls, NULL, &err) == -1 &&
		   calls == nmax,
		   "fast walker: nothing visible gives -1 after asking about all %d versions", nmax);
	}
	pfree(b.p);
	pfree(c.p);
	pfree(idx);
}

/* Build a chain of model versions n-1 .. 0 (newest = n-1), format f */
static Buf
chain_of_format(int n, int f)
{
	Buf			b = buf_new(64 * 1024);
	char		space[64];
	MinidbVersionData v = model_version(0, space);
	int			i;

	b.len = minidb_record_build_as(b.p, b.size, &v, f);
	for (i = 1; i < n; i++)
	{
		v = model_version(i, space);
		b.len = minidb_record_prepend(b.p, b.size, b.p, b.len, &v);
	}
	return b;
}

static Buf
chain_of(int n)
{
	return chain_of_format(n, cur_format);
}

static void
test_prune(void)
{
	const int	n = 40;
	static const char *names[] = {"keep every other", "keep head only",
	"keep oldest only", "keep all", "drop head", "drop all"};
	int			m;

	for (m = 0; m < lengthof(names); m++)
	{
		Buf			b = chain_of(n);
		bool		keep[40];
		int			idx[40];
		int			kept = 0;
		int			i;
		uint32		len;
		MinidbChainError err;

		for (i = 0; i < n; i++)
		{
			switch (m)
			{
				case 0:
					keep[i] = (i % 2 == 0);
					break;
				case 1:
					keep[i] = (i == 0);
					break;
				case 2:
					keep[i] = (i == n - 1);
					break;
				case 3:
					keep[i] = true;
					break;
				case 4:
					keep[i] = (i != 0);
					break;
				default:
					keep[i] = false;
					break;
			}
			if (keep[i])
				idx[kept++] = n - 1 - i;
		}
		len = minidb_record_prune(b.p, b.len, keep);
		if (kept == 0)
			ok(len == 0, "prune (%s): returns 0", names[m]);
		else
			ok(len > 0 && minidb_record_validate(b.p, len, &err) &&
			   record_matches(b.p, len, idx, kept) &&
			   minidb_record_header(b.p)->rh_nversions == kept,
			   "prune (%s): %d versions left, valid, in order", names[m], kept);
		pfree(b.p);
	}
}

/* ---- validation errors ---- */

typedef void (*Damage) (char *rec, uint32 *len);

static MinidbVersionHeaderV1 *
vh_at(char *rec, int index)
{
	MinidbChainIter it;
	MinidbVersionRef ref;
	MinidbChainError err;
	bool		damaged;

	minidb_chain_iter_init(&it, rec, minidb_record_header(rec)->rh_len, &err);
	while (minidb_chain_iter_next(&it, &ref, &err, &damaged))
		if (ref.index == index)
			return (MinidbVersionHeaderV1 *) ref.vh;
	abort();
}

/* Offset of version 0 of a V1 or V2 record */
static uint32
head_offset(const char *rec)
{
	if (minidb_record_header(rec)->rh_format == MINIDB_FORMAT_V2)
		return minidb_record_dir(rec)[0];
	return MINIDB_RECORD_HDRSZ;
}

#define HDR(rec) minidb_record_header(rec)

static void d_short(char *r, uint32 *len) { *len = MINIDB_RECORD_HDRSZ - 1; }
static void d_format(char *r, uint32 *len) { HDR(r)->rh_format = 9; }
static void d_rhflags(char *r, uint32 *len) { HDR(r)->rh_flags = 0x80; }
static void d_rhlen(char *r, uint32 *len) { HDR(r)->rh_len += 8; }
static void d_truncated(char *r, uint32 *len) { *len -= 3; HDR(r)->rh_len = *len; }
static void d_zero_versions(char *r, uint32 *len) { HDR(r)->rh_nversions = 0; }
static void d_many_versions(char *r, uint32 *len) { HDR(r)->rh_nversions = 60000; }
static void d_unfit_versions(char *r, uint32 *len) { HDR(r)->rh_nversions = 5000; }
static void d_more_versions(char *r, uint32 *len) { HDR(r)->rh_nversions += 1; }
static void d_lockmode(char *r, uint32 *len) { HDR(r)->rh_lockmode = 9; HDR(r)->rh_locker = 5; }
static void d_locker(char *r, uint32 *len) { HDR(r)->rh_lockmode = MINIDB_LOCK_SHARE; }
static void d_vhlen_small(char *r, uint32 *len) { vh_at(r, 1)->vh_len = 3; }
static void d_vhlen_past(char *r, uint32 *len) { vh_at(r, 3)->vh_len = 60000; }
static void d_vhlen_longer(char *r, uint32 *len) { vh_at(r, 0)->vh_len += 8; }
static void d_xmin(char *r, uint32 *len) { vh_at(r, 2)->vh_xmin = InvalidTransactionId; }
static void d_vflags(char *r, uint32 *len) { vh_at(r, 1)->vh_flags |= 0x8000; }
static void d_encoding(char *r, uint32 *len) { vh_at(r, 1)->vh_flags |= 0x0100; }
static void d_commit_abort(char *r, uint32 *len) { vh_at(r, 2)->vh_flags |= MINIDB_V_XMIN_ABORTED; }
static void d_frozen_abort(char *r, uint32 *len) { MinidbVersionHeaderV1 *vh = vh_at(r, 2); vh->vh_flags = (vh->vh_flags & ~MINIDB_V_HINT_MASK) | MINIDB_V_FROZEN | MINIDB_V_XMIN_ABORTED; }
static void d_tomb_moved(char *r, uint32 *len) { vh_at(r, 1)->vh_flags |= MINIDB_V_MOVED; }
static void d_moved_late(char *r, uint32 *len) { MinidbVersionHeaderV1 *vh = vh_at(r, 10); ItemPointerSet(&HDR(r)->rh_successor, 1, 1); vh->vh_flags = MINIDB_V_MOVED; }
static void d_moved_nosucc(char *r, uint32 *len) { vh_at(r, 0)->vh_flags = MINIDB_V_MOVED; }
static void d_keys_tomb(char *r, uint32 *len) { vh_at(r, 1)->vh_flags |= MINIDB_V_KEYS_UPDATED; }
static void d_reserved(char *r, uint32 *len) { vh_at(r, 4)->vh_reserved = 1; }
static void d_marker_natts(char *r, uint32 *len) { vh_at(r, 1)->vh_natts = 1; }
static void d_marker_flags(char *r, uint32 *len) { vh_at(r, 1)->vh_flags |= MINIDB_V_HASVARWIDTH; }
static void d_marker_data(char *r, uint32 *len) { MinidbVersionHeaderV1 *vh = vh_at(r, 2); vh->vh_flags = MINIDB_V_TOMBSTONE; vh->vh_natts = 0; }
static void d_natts(char *r, uint32 *len) { vh_at(r, 2)->vh_natts = 2000; }
static void d_null_noatts(char *r, uint32 *len) { MinidbVersionHeaderV1 *vh = vh_at(r, 2); vh->vh_flags |= MINIDB_V_HASNULL; vh->vh_natts = 0; }
static void d_hoff_align(char *r, uint32 *len) { vh_at(r, 2)->vh_hoff = 20; }
static void d_hoff_canon(char *r, uint32 *len) { vh_at(r, 2)->vh_hoff = 24; }
static void d_hoff_past(char *r, uint32 *len) { MinidbVersionHeaderV1 *vh = vh_at(r, 2); vh->vh_flags |= MINIDB_V_HASNULL; vh->vh_natts = 1600; vh->vh_hoff = 216; }
static void d_trailing(char *r, uint32 *len) { *len += 8; HDR(r)->rh_len = *len; }
/* V2 only: the directory, and the last version */
#define DIR(rec) minidb_record_dir(rec)
static void d_dir0(char *r, uint32 *len) { DIR(r)[0] += 8; }
static void d_dir_middle(char *r, uint32 *len) { DIR(r)[5] += 8; }
static void d_dir_last_unaligned(char *r, uint32 *len) { DIR(r)[11] += 2; }
static void d_dir_last_low(char *r, uint32 *len) { DIR(r)[11] = DIR(r)[0]; }
static void d_dir_last_shifted(char *r, uint32 *len) { DIR(r)[11] += 8; }
static void d_last_xmin(char *r, uint32 *len) { vh_at(r, 11)->vh_xmin = InvalidTransactionId; }
static void d_v2_big(char *r, uint32 *len) { *len = MINIDB_V2_MAX_LEN + 1; HDR(r)->rh_len = *len; }

/*
 * What the V2 fast walker does with the damage when the newest reader
 * (head visible) reads the record: SAME refuses it with validate's error;
 * TAIL refuses it with an error at the last version (the tail check)
 * while validate reports an earlier version it did not visit; ACCEPT
 * returns the head: the damage lies in a middle version it did not visit
 * (the V2 trade-off; validate, the iterator and the oldest reader see it).
 */
typedef enum { SAME, TAIL, ACCEPT } V2Fast;

typedef struct DamageCase
{
	const char *what;
	Damage		damage;
	int			version;
	const char *field;
	const char *detail;			/* a substring of the detail */
	V2Fast		v2fast;
	/* V2's validate error where it differs from V1's (else NULL field) */
	int			v2version;
	const char *v2field;
	const char *v2detail;
	int			formats;		/* 1: V1 only, 2: V2 only, 3: both */
} DamageCase;

static const DamageCase damage_cases[] = {
	{"record shorter than its header", d_short, -1, "rh_len", "shorter than the record header", SAME, 0, NULL, NULL, 3},
	{"unknown format", d_format, -1, "rh_format", "unknown record format 9", SAME, 0, NULL, NULL, 3},
	{"unknown record flag", d_rhflags, -1, "rh_flags", "unknown flag bits 0x80", SAME, 0, NULL, NULL, 3},
	{"rh_len disagrees with length", d_rhlen, -1, "rh_len", "header says", SAME, 0, NULL, NULL, 3},
	{"truncated tail", d_truncated, 11, "vh_len", "runs past record end", SAME, 0, NULL, NULL, 3},
	{"zero versions", d_zero_versions, -1, "rh_nversions", "at least one version", SAME, 0, NULL, NULL, 3},
	{"impossible count", d_many_versions, -1, "rh_nversions", "exceed the limit", SAME, 0, NULL, NULL, 3},
	{"count that cannot fit", d_unfit_versions, -1, "rh_nversions", "cannot fit", SAME, 0, NULL, NULL, 3},
	{"one version too many", d_more_versions, 12, "rh_nversions", "before version 12 of 13 begins", TAIL, 11, "rh_dir", "directory entry 12 is 0", 3},
	{"unknown lock mode", d_lockmode, -1, "rh_lockmode", "unknown lock mode 9", SAME, 0, NULL, NULL, 3},
	{"lock without locker", d_locker, -1, "rh_locker", "invalid locker", SAME, 0, NULL, NULL, 3},
	{"vh_len below header size", d_vhlen_small, 1, "vh_len", "shorter than the version header", ACCEPT, 0, NULL, NULL, 3},
	{"garbled vh_len", d_vhlen_past, 3, "vh_len", "length 60000 at offset", ACCEPT, 0, NULL, NULL, 3},
	{"vh_len too long by 8", d_vhlen_longer, 1, "vh_len", "shorter than the version header", SAME, 0, "rh_dir", "directory entry 1 is", 3},
	{"invalid xmin", d_xmin, 2, "vh_xmin", "InvalidTransactionId", ACCEPT, 0, NULL, NULL, 3},
	{"unknown version flag", d_vflags, 1, "vh_flags", "unknown flag bits 0x8000", ACCEPT, 0, NULL, NULL, 3},
	{"unknown encoding", d_encoding, 1, "vh_flags", "unknown data encoding 1", ACCEPT, 0, NULL, NULL, 3},
	{"committed and aborted", d_commit_abort, 2, "vh_flags", "both committed and aborted", ACCEPT, 0, NULL, NULL, 3},
	{"frozen and aborted", d_frozen_abort, 2, "vh_flags", "both frozen and aborted", ACCEPT, 0, NULL, NULL, 3},
	{"tombstone and moved", d_tomb_moved, 1, "vh_flags", "tombstone and a moved marker", ACCEPT, 0, NULL, NULL, 3},
	{"moved below the head", d_moved_late, 10, "vh_flags", "only the newest version may be moved", ACCEPT, 0, NULL, NULL, 3},
	{"moved head, no successor", d_moved_nosucc, 0, "rh_successor", "no valid successor", SAME, 0, NULL, NULL, 3},
	{"keys-updated tombstone", d_keys_tomb, 1, "vh_flags", "keys-updated flag on a tombstone", ACCEPT, 0, NULL, NULL, 3},
	{"reserved byte", d_reserved, 4, "vh_reserved", "reserved byte is 1", ACCEPT, 0, NULL, NULL, 3},
	{"marker with attributes", d_marker_natts, 1, "vh_natts", "carries no attributes", ACCEPT, 0, NULL, NULL, 3},
	{"marker with data flags", d_marker_flags, 1, "vh_flags", "carries data flags 0x0040", ACCEPT, 0, NULL, NULL, 3},
	{"marker with data bytes", d_marker_data, 2, "vh_len", "carries no data", ACCEPT, 0, NULL, NULL, 3},
	{"too many attributes", d_natts, 2, "vh_natts", "2000 attributes exceed", ACCEPT, 0, NULL, NULL, 3},
	{"null bitmap without attributes", d_null_noatts, 2, "vh_flags", "without attributes", ACCEPT, 0, NULL, NULL, 3},
	{"vh_hoff not MAXALIGNed", d_hoff_align, 2, "vh_hoff", "not MAXALIGNed", ACCEPT, 0, NULL, NULL, 3},
	{"vh_hoff not canonical", d_hoff_canon, 2, "vh_hoff", "expected 16", ACCEPT, 0, NULL, NULL, 3},
	{"vh_hoff past version end", d_hoff_past, 2, "vh_hoff", "lies past the version end", ACCEPT, 0, NULL, NULL, 3},
	{"trailing bytes", d_trailing, 11, "vh_len", "8 trailing bytes", SAME, 0, NULL, NULL, 3},
	{"V2 directory entry 0", d_dir0, 0, "rh_dir", "directory entry 0 is 56, expected 48", SAME, 0, NULL, NULL, 2},
	{"V2 middle directory entry", d_dir_middle, 4, "rh_dir", "but directory entry 5 is", ACCEPT, 0, NULL, NULL, 2},
	{"V2 last entry not MAXALIGNed", d_dir_last_unaligned, 10, "rh_dir", "but directory entry 11 is", TAIL, 0, NULL, NULL, 2},
	{"V2 last entry inside the directory's room", d_dir_last_low, 10, "rh_dir", "but directory entry 11 is 48", TAIL, 0, NULL, NULL, 2},
	{"V2 last entry shifted by 8", d_dir_last_shifted, 10, "rh_dir", "but directory entry 11 is", TAIL, 0, NULL, NULL, 2},
	{"V2 garbled last version", d_last_xmin, 11, "vh_xmin", "InvalidTransactionId", SAME, 0, NULL, NULL, 2},
	{"V2 record longer than 65535 bytes", d_v2_big, -1, "rh_len", "exceeds the format 2 limit", SAME, 0, NULL, NULL, 2},
};

static void
test_damage(void)
{
	int			i;

	for (i = 0; i < lengthof(damage_cases); i++)
	{
		const DamageCase *dc = &damage_cases[i];
		Buf			b;
		MinidbChainError err;
		MinidbChainError ferr;
		MinidbChainError oerr;
		MinidbVersionData *vs;
		Cut			c = {12, 12, 0};	/* sees everything: head is visible */
		Cut			none = {12, 0, 0};	/* sees nothing: visits every version */
		uint32		len;
		bool		valid;
		int			fast;
		int			oldest;
		int			want_version = dc->version;
		const char *want_field = dc->field;
		const char *want_detail = dc->detail;
		V2Fast		mode = cur_format == MINIDB_FORMAT_V2 ? dc->v2fast : SAME;

		if (!(dc->formats & (cur_format == MINIDB_FORMAT_V2 ? 2 : 1)))
			continue;
		if (cur_format == MINIDB_FORMAT_V2 && dc->v2field)
		{
			want_version = dc->v2version;
			want_field = dc->v2field;
			want_detail = dc->v2detail;
		}
		b = chain_of(12);
		if (b.size < MINIDB_V2_MAX_LEN + 8)
		{
			b.p = repalloc(b.p, MINIDB_V2_MAX_LEN + 8);
			b.size = MINIDB_V2_MAX_LEN + 8;
		}
		dc->damage(b.p, &b.len);
		len = b.len;
		memset(&err, 0, sizeof(err));
		valid = minidb_record_validate(b.p, len, &err);
		if (!ok(!valid && err.version == want_version &&
				strcmp(err.field, want_field) == 0 &&
				strstr(err.detail, want_detail) != NULL,
				"validate: %s -> version %d, field \"%s\"", dc->what,
				want_version, want_field))
			printf("#   got valid=%d version %d field \"%s\": %s\n", valid,
				   err.version, valid ? "" : err.field, valid ? "" : err.detail);
		ok(minidb_chain_decode_all(b.p, len, &vs, &ferr) == -1 && vs == NULL &&
		   ferr.version == err.version && strcmp(ferr.detail, err.detail) == 0,
		   "reference walker reports validate's error: %s", dc->what);

		/* the oldest reader visits every version: validate's error */
		oldest = minidb_chain_find_visible(b.p, len, cut_visible, &none, NULL, &oerr);
		ok(oldest == -2 && oerr.version == err.version &&
		   strcmp(oerr.field, err.field) == 0 &&
		   strcmp(oerr.detail, err.detail) == 0,
		   "fast walker, reader that visits every version: same damage: %s", dc->what);

		/* the newest reader */
		memset(&ferr, 0, sizeof(ferr));
		fast = minidb_chain_find_visible(b.p, len, cut_visible, &c, NULL, &ferr);
		switch (mode)
		{
			case SAME:
				ok(fast == -2 && ferr.version == err.version &&
				   strcmp(ferr.field, err.field) == 0 &&
				   strcmp(ferr.detail, err.detail) == 0,
				   "fast walker, newest reader: same damage: %s", dc->what);
				break;
			case TAIL:
				ok(fast == -2 && ferr.version == HDR(b.p)->rh_nversions - 1 &&
				   err.version < ferr.version,
				   "fast walker, newest reader: tail check refuses it at the last version (validate: version %d): %s",
				   err.version, dc->what);
				break;
			case ACCEPT:
				ok(fast == 0 && err.version > 0 &&
				   err.version < HDR(b.p)->rh_nversions - 1,
				   "fast walker, newest reader: accepts (damage in unvisited version %d; the V2 trade-off): %s",
				   err.version, dc->what);
				break;
		}
		if (fast == -2 && mode != SAME)
			printf("#   fast: version %d field %s: %s\n", ferr.version, ferr.field, ferr.detail);
		pfree(b.p);
	}
}

/*
 * A moved head whose MOVED flag is lost (t/104, seed 7: one bit of
 * vh_flags) reads as a data version without attributes, an all-NULL row
 * where the row had moved.  The successor it leaves behind gives it away
 * to validate, the walkers and the V2 one-version shortcut alike.  A
 * successor under a data version with attributes, which pruning an
 * aborted moved head left behind before 2026-12, still validates; pruning
 * now clears it.
 */
static void
test_lost_moved_flag(void)
{
	Buf			b = buf_new(256);
	char		space[64];
	MinidbVersionData d = model_version(1, space);
	MinidbVersionData m;
	MinidbVersionData pv;
	MinidbRecordEnd extra;
	ItemPointerData succ;
	MinidbChainError err;
	MinidbChainError ferr;
	Cut			all = {2, 2, 0};
	bool		keep[2] = {false, true};

	memset(&m, 0, sizeof(m));
	m.xmin = 900;
	m.flags = MINIDB_V_MOVED | MINIDB_V_XMIN_COMMITTED;
	memset(&extra, 0, sizeof(extra));
	for (int part = 0; part <= 1; part++)
	{
		if (part)
			ItemPointerSetMovedPartitions(&succ);
		else
			ItemPointerSet(&succ, 7, 3);
		extra.successor = &succ;
		extra.moved_part = part;
		for (int n = 1; n <= 2; n++)
		{
			if (n == 1)
				b.len = minidb_record_build_ex(b.p, b.size, &m, cur_format,
											   &extra);
			else
			{
				b.len = minidb_record_build(b.p, b.size, &d);
				b.len = minidb_record_prepend_ex(b.p, b.size, b.p, b.len, &m,
												 cur_format, &extra);
			}
			ok(minidb_record_validate(b.p, b.len, &err),
			   "moved head (%d versions, %s) validates", n,
			   part ? "to another partition" : "successor TID");
			vh_at(b.p, 0)->vh_flags &= ~MINIDB_V_MOVED;
			memset(&err, 0, sizeof(err));
			ok(!minidb_record_validate(b.p, b.len, &err) &&
			   err.version == 0 && strcmp(err.field, "rh_successor") == 0 &&
			   strstr(err.detail, "lost its flag") != NULL,
			   "moved head that lost its flag (%d versions, %s) is refused (rh_successor)",
			   n, part ? "to another partition" : "successor TID");
			all.nversions = all.oldest_k = n;
			ok(minidb_chain_find_visible(b.p, b.len, cut_visible, &all, NULL,
										 &ferr) == -2 &&
			   strcmp(ferr.detail, err.detail) == 0,
			   "fast walker refuses a moved head that lost its flag (%d versions)",
			   n);
			ok(!minidb_chain_single_plain(b.p, b.len, &pv),
			   "single_plain refuses a moved head that lost its flag (%d versions)",
			   n);
		}
	}

	/* a stale successor under a data version with attributes */
	b.len = minidb_record_build(b.p, b.size, &d);
	ItemPointerSet(&minidb_record_header(b.p)->rh_successor, 7, 3);
	ok(minidb_record_validate(b.p, b.len, &err),
	   "a successor under a data version with attributes validates (pruned by older builds)");

	/* pruning an aborted moved head takes its successor along */
	ItemPointerSetMovedPartitions(&succ);
	extra.moved_part = true;
	m.flags = MINIDB_V_MOVED | MINIDB_V_XMIN_ABORTED;
	b.len = minidb_record_build(b.p, b.size, &d);
	b.len = minidb_record_prepend_ex(b.p, b.size, b.p, b.len, &m, cur_format,
									 &extra);
	b.len = minidb_record_prune(b.p, b.len, keep);
	ok(b.len > 0 && minidb_record_header(b.p)->rh_nversions == 1 &&
	   minidb_record_header(b.p)->rh_successor.ip_posid == 0 &&
	   minidb_record_header(b.p)->rh_flags == 0 &&
	   minidb_record_validate(b.p, b.len, &err),
	   "pruning an aborted moved head clears its successor and moved-partition flag");
	pfree(b.p);
}

/* The fast walker keeps walking after a hit: damage past it still fails */
static void
test_tail_after_hit(void)
{
	Buf			b = chain_of(12);
	Cut			c = {12, 12, 0};
	MinidbChainError err;
	MinidbVersionRef ref;

	ok(minidb_chain_find_visible(b.p, b.len, cut_visible, &c, &ref, &err) == 0,
	   "fast walker: head visible on an intact record");
	d_trailing(b.p, &b.len);
	ok(minidb_chain_find_visible(b.p, b.len, cut_visible, &c, &ref, &err) == -2 &&
	   strstr(err.detail, "trailing") != NULL,
	   "fast walker: head visible but tail damaged gives -2 (tail check)");
	pfree(b.p);
}

/* Programming errors raise elog(ERROR) */
static void
test_programming_errors(void)
{
	Buf			b = buf_new(64);
	char		space[64];
	MinidbVersionData v = model_version(0, space);
	char	   *big = palloc0(70000);
	bool		caught;

	MINIDB_SHIM_EXPECT_ERROR(caught, minidb_record_build(b.p, 8, &v));
	ok(caught && strstr(minidb_shim_last_error, "output buffer") != NULL,
	   "elog(ERROR) when the output buffer is too small");
	v.data = big;
	v.datalen = 70000;
	MINIDB_SHIM_EXPECT_ERROR(caught, (void) minidb_record_build(b.p, b.size, &v));
	ok(caught && strstr(minidb_shim_last_error, "exceeds the limit") != NULL,
	   "elog(ERROR) for a version longer than a uint16 vh_len");
	pfree(big);
	pfree(b.p);

	{
		Buf			c = chain_of(2);

		minidb_record_header(c.p)->rh_nversions = MINIDB_MAX_VERSIONS;
		v = model_version(0, space);
		MINIDB_SHIM_EXPECT_ERROR(caught, minidb_record_prepend(c.p, c.size, c.p, c.len, &v));
		ok(caught && strstr(minidb_shim_last_error, "the limit") != NULL,
		   "elog(ERROR) when prepending beyond MINIDB_MAX_VERSIONS");
		pfree(c.p);
	}
}

/* Counting predicate: the head is visible; counts the questions */
static bool
head_visible_counting(MinidbVersionHeader *vh, int index, void *arg)
{
	(*(int *) arg)++;
	return true;
}

/* V2's layout: the directory, the lengths, the O(1) newest read */
static void
test_v2_layout(void)
{
	static const int depths[] = {1, 2, 3, 6, 7, 60, 500};
	int			d;
	bool		dir_ok = true;
	bool		len_ok = true;
	bool		one_question = true;
	bool		prune_ok = true;

	for (d = 0; d < lengthof(depths); d++)
	{
		int			n = depths[d];
		Buf			a = chain_of_format(n, MINIDB_FORMAT_V1);
		Buf			b = chain_of_format(n, MINIDB_FORMAT_V2);
		MinidbChainIter it;
		MinidbVersionRef ref;
		MinidbChainError err;
		bool		damaged;
		int			calls = 0;
		bool		keep[500];
		int			i;

		/* V2 = V1 + the directory beyond the header's padding */
		if (b.len - a.len != MINIDB_V2_DATA_START(n) - MINIDB_RECORD_HDRSZ)
			len_ok = false;
		if (n <= 2 && b.len != a.len)
			len_ok = false;
		/* the directory lists where the iterator finds each version */
		if (DIR(b.p)[0] != MINIDB_V2_DATA_START(n))
			dir_ok = false;
		minidb_chain_iter_init(&it, b.p, b.len, &err);
		while (minidb_chain_iter_next(&it, &ref, &err, &damaged))
			if (DIR(b.p)[ref.index] != ref.offset)
				dir_ok = false;
		if (damaged || head_offset(b.p) != DIR(b.p)[0] ||
			head_offset(a.p) != MINIDB_RECORD_HDRSZ)
			dir_ok = false;
		/* newest reader: one question, whatever the depth */
		if (minidb_chain_find_visible(b.p, b.len, head_visible_counting, &calls,
									  &ref, &err) != 0 || calls != 1 ||
			ref.offset != DIR(b.p)[0])
			one_question = false;
		/* prune keeps the format and rebuilds the directory */
		for (i = 0; i < n; i++)
			keep[i] = (i % 3 != 1);
		b.len = minidb_record_prune(b.p, b.len, keep);
		a.len = minidb_record_prune(a.p, a.len, keep);
		if (HDR(b.p)->rh_format != MINIDB_FORMAT_V2 ||
			!minidb_record_validate(b.p, b.len, &err) ||
			!iterator_matches_reference(b.p, b.len) ||
			b.len - a.len != MINIDB_V2_DATA_START(HDR(b.p)->rh_nversions) - MINIDB_RECORD_HDRSZ)
			prune_ok = false;
		pfree(a.p);
		pfree(b.p);
	}
	ok(len_ok, "v2 layout: length is V1's plus the directory beyond the header padding (same for 1-2 versions)");
	ok(dir_ok, "v2 layout: dir[0] is the directory's end, dir[i] is where version i starts");
	ok(one_question, "v2 fast walker: the newest reader is asked once, at depths 1 to 500");
	ok(prune_ok, "v2 prune: keeps the format, valid, directory rebuilt, same versions as V1");
}

/* The same versions decode identically in both formats */
static void
test_formats_agree(void)
{
	static const int depths[] = {1, 2, 3, 4, 5, 12, 60, 200};
	int			d;
	bool		same = true;
	bool		cuts = true;

	for (d = 0; d < lengthof(depths); d++)
	{
		int			n = depths[d];
		Buf			a = chain_of_format(n, MINIDB_FORMAT_V1);
		Buf			b = chain_of_format(n, MINIDB_FORMAT_V2);
		MinidbVersionData *va;
		MinidbVersionData *vb;
		MinidbChainError err;
		int			na = minidb_chain_decode_all(a.p, a.len, &va, &err);
		int			nb = minidb_chain_decode_all(b.p, b.len, &vb, &err);
		int			i;
		int			k;

		if (na != n || nb != n)
			same = false;
		for (i = 0; same && i < n; i++)
			same = minidb_version_equal(&va[i], &vb[i]);
		/* every cut: same index, and the same bytes through version_get */
		for (k = 0; k <= n; k++)
		{
			Cut			c = {n, k, 0x5};
			MinidbVersionRef ra;
			MinidbVersionRef rb;
			int			fa = minidb_chain_find_visible(a.p, a.len, cut_visible, &c, &ra, &err);
			int			fb = minidb_chain_find_visible(b.p, b.len, cut_visible, &c, &rb, &err);

			if (fa != fb)
				cuts = false;
			else if (fa >= 0)
			{
				MinidbVersionData ga;
				MinidbVersionData gb;

				minidb_version_get(a.p, &ra, &ga);
				minidb_version_get(b.p, &rb, &gb);
				if (!minidb_version_equal(&ga, &gb))
					cuts = false;
			}
		}
		if (na > 0)
			minidb_chain_free_all(va, na);
		if (nb > 0)
			minidb_chain_free_all(vb, nb);
		pfree(a.p);
		pfree(b.p);
	}
	ok(same, "v1 and v2 records of the same versions decode identically (depths 1..200)");
	ok(cuts, "v1 and v2 fast walkers pick the same version, same bytes, on every cut");
}

/* Prepend keeps a record's format, whatever minidb_record_format says */
static void
test_keep_format(void)
{
	int			saved = minidb_record_format;
	Buf			a = chain_of_format(3, MINIDB_FORMAT_V1);
	Buf			b = chain_of_format(3, MINIDB_FORMAT_V2);
	char		space[64];
	MinidbVersionData v = model_version(3, space);
	MinidbChainError err;

	minidb_record_format = MINIDB_FORMAT_V2;
	a.len = minidb_record_prepend(a.p, a.size, a.p, a.len, &v);
	minidb_record_format = MINIDB_FORMAT_V1;
	b.len = minidb_record_prepend(b.p, b.size, b.p, b.len, &v);
	ok(HDR(a.p)->rh_format == MINIDB_FORMAT_V1 && minidb_record_validate(a.p, a.len, &err),
	   "prepend keeps a V1 record V1 while minidb_record_format is v2");
	ok(HDR(b.p)->rh_format == MINIDB_FORMAT_V2 && minidb_record_validate(b.p, b.len, &err),
	   "prepend keeps a V2 record V2 while minidb_record_format is v1");
	minidb_record_format = MINIDB_FORMAT_V2;
	a.len = minidb_record_build(a.p, a.size, &v);
	ok(HDR(a.p)->rh_format == MINIDB_FORMAT_V2,
	   "minidb_record_build makes the format minidb_record_format says");
	minidb_record_format = saved;
	pfree(a.p);
	pfree(b.p);
}

/*
 * Prepend v to the record in b in place, catching an elog(ERROR): true when
 * it raised one (b is then unchanged).  The sigsetjmp lives here rather than
 * in the caller's loop so that no local variable of a function that calls
 * sigsetjmp is changed between it and the longjmp (gcc 14 reports the
 * caller's Buf under -Wclobbered otherwise).
 */
static bool
prepend_catching(Buf *b, const MinidbVersionData *v)
{
	bool		caught;

	MINIDB_SHIM_EXPECT_ERROR(caught, b->len = minidb_record_prepend(b->p, b->size, b->p, b->len, v));
	return caught;
}

/* V2 records are at most MINIDB_V2_MAX_LEN bytes: builders refuse more */
static void
test_v2_limits(void)
{
	Buf			b = buf_new(2 * MINIDB_V2_MAX_LEN);
	MinidbVersionData v;
	char	   *big = palloc0(MINIDB_V2_MAX_LEN);
	bool		caught;
	int			n = 0;
	MinidbChainError err;

	memset(&v, 0, sizeof(v));
	v.xmin = FirstNormalTransactionId;
	v.natts = 1;
	v.data = big;
	v.datalen = MINIDB_V2_MAX_LEN - 20;	/* version fits a uint16, record not */
	MINIDB_SHIM_EXPECT_ERROR(caught, (void) minidb_record_build_as(b.p, b.size, &v, MINIDB_FORMAT_V2));
	ok(caught && strstr(minidb_shim_last_error, "more than its limit") != NULL,
	   "elog(ERROR) building a V2 record over 65535 bytes");
	v.datalen = 4000;
	b.len = minidb_record_build_as(b.p, b.size, &v, MINIDB_FORMAT_V2);
	caught = false;
	while (!caught && n < 100)
	{
		caught = prepend_catching(&b, &v);
		n++;
	}
	ok(caught && strstr(minidb_shim_last_error, "more than its limit") != NULL &&
	   minidb_record_validate(b.p, b.len, &err) && b.len <= MINIDB_V2_MAX_LEN,
	   "elog(ERROR) prepending past 65535 bytes; the record before it is intact (%d versions)",
	   HDR(b.p)->rh_nversions);
	MINIDB_SHIM_EXPECT_ERROR(caught, (void) minidb_record_build_as(b.p, b.size, &v, 7));
	ok(caught && strstr(minidb_shim_last_error, "unknown record format") != NULL,
	   "elog(ERROR) building an unknown format");
	pfree(big);
	pfree(b.p);
}

int
main(void)
{
	static const int formats[] = {MINIDB_FORMAT_V1, MINIDB_FORMAT_V2};

	for (int f = 0; f < lengthof(formats); f++)
	{
		cur_format = formats[f];
		minidb_record_format = cur_format;
		test_build_one();
		test_build_markers();
		test_prepend_long();
		test_prune();
		test_damage();
		test_lost_moved_flag();
		test_tail_after_hit();
		test_programming_errors();
	}
	cur_format = MINIDB_FORMAT_V2;
	minidb_record_format = MINIDB_FORMAT_V1;
	test_v2_layout();
	test_formats_agree();
	test_keep_format();
	test_v2_limits();
	test_single_plain(MINIDB_FORMAT_V2);
	printf("1..%d\n", ntests);
	if (nfailed)
		printf("# %d of %d unit tests failed\n", nfailed, ntests);
	return nfailed ? 1 : 0;
}
