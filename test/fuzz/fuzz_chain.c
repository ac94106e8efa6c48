/*-------------------------------------------------------------------------
 *
 * fuzz_chain.c
 *	  libFuzzer target for chain.c: a differential harness that holds the
 *	  fast walker to the reference walker.
 *
 * Input: byte 0 picks the mode, bytes 1..8 seed the visibility predicates,
 * the rest is the payload.
 *
 *	raw mode (byte 0 even): the payload is a record, copied into a buffer of
 *	  exactly its length (so AddressSanitizer flags any read past it).
 *	structured mode (byte 0 odd): the payload is a small program that builds
 *	  a valid chain with minidb_record_build/prepend/prune, checked against
 *	  a model, and then optionally damages it (flip a byte, truncate, append).
 *	  Every program is built in both record formats, side by side: both
 *	  must hold the model, version for version (V1 and V2 agree); byte 0's
 *	  bit 1 picks the one that is damaged and checked (set: V2).
 *
 * On every record, damaged or not:
 *	- validate, the reference walker and the iterator must agree on whether
 *	  it is damaged and on the error (version, field, detail);
 *	- V1: so must the fast walker, for every predicate;
 *	- V2: the fast walker checks the record header, dir[0], the versions it
 *	  asks the predicate about and the last version (chain.h).  On a damaged
 *	  record it must either report validate's error, or report damage at
 *	  the last version while validate's (first) error lies in a version it
 *	  did not visit and that is not the last; and if it accepts the record,
 *	  validate's error must lie in a middle version it did not visit, and
 *	  the version it returns must equal what the iterator yielded for that
 *	  index before reaching the damage;
 *	- on a valid record, every version the iterator yields equals what the
 *	  reference walker copied, and for every visibility cut (sees nothing,
 *	  sees the oldest k, with "aborted" and "in progress" versions sprinkled
 *	  in from the seed bytes, and an xid-horizon predicate) the fast walker
 *	  returns the same version as the reference walker and asks the
 *	  predicate about the same versions in the same order;
 *	- V1, on a damaged record: the fast walker returns -2 for every
 *	  predicate, even when it found a visible version before the damage
 *	  (tail check).  V2: a damaged tail fails every predicate too.
 * A disagreement prints "MINIDB-DIFF-MISMATCH" and aborts; make plantedbug
 * relies on that marker.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres_fe.h"

#include <time.h>

#include "chain_shim.h"
#include "access/transam.h"
#include "chain.h"

#define MAX_PROGRAM_VERSIONS	200
#define MAX_ITER_VERSIONS		8192

/* What the iterator yielded on the record being checked, before any damage */
static MinidbVersionData iter_versions[MAX_ITER_VERSIONS];
static int	iter_seen;

static struct timespec fuzz_start;
static long fuzz_execs = 0;

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
same_version(const MinidbVersionData *a, const MinidbVersionData *b)
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

static bool
same_error(const MinidbChainError *a, const MinidbChainError *b)
{
	return a->version == b->version && strcmp(a->field, b->field) == 0 &&
		strcmp(a->detail, b->detail) == 0;
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
	int			slow;

	if (!valid && len >= 1 && (uint8) rec[0] == MINIDB_FORMAT_V2 &&
		verr->version >= 0)
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
		{
			MinidbVersionData fv;

			if (fast >= iter_seen || fast != visited - 1 ||
				ref.index != fast || (char *) ref.vh != rec + ref.offset)
				mismatch("v2: fast walker accepted version %d of a damaged record, but the iterator yielded only %d",
						 fast, iter_seen);
			minidb_version_get(rec, &ref, &fv);
			if (!same_version(&fv, &iter_versions[fast]))
				mismatch("v2: version %d the fast walker returned differs from the iterator's", fast);
		}
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
		mismatch("fast walker picked %d, reference %d (kind %d, k %d, n %d)",
				 fast, slow, pred->kind, pred->oldest_k, n);
	if (fp.ncalls != rp.ncalls ||
		memcmp(fp.calls, rp.calls,
			   sizeof(int) * Min(fp.ncalls, lengthof(fp.calls))) != 0)
		mismatch("walkers asked the predicate different questions (%d vs %d calls)",
				 fp.ncalls, rp.ncalls);
	if (fast >= 0)
	{
		MinidbVersionData fv;

		if (ref.index != fast || (char *) ref.vh != rec + ref.offset)
			mismatch("fast walker's ref is inconsistent");
		minidb_version_get(rec, &ref, &fv);
		if (!same_version(&fv, &vs[fast]))
			mismatch("visible version %d differs between walkers", fast);
	}
}

/* Every check on one record */
static void
check_record(char *rec, uint32 len, uint64 seed)
{
	MinidbChainError verr;
	MinidbChainError rerr;
	MinidbChainError ierr;
	MinidbVersionData *vs;
	MinidbChainIter it;
	MinidbVersionRef ref;
	bool		valid;
	bool		damaged = false;
	int			n;
	int			seen = 0;
	Predicate	p;
	int			i;

	memset(&verr, 0, sizeof(verr));
	valid = minidb_record_validate(rec, len, &verr);
	n = minidb_chain_decode_all(rec, len, &vs, &rerr);
	if (valid != (n >= 0))
		mismatch("validate says %d, reference walker returned %d", valid, n);
	if (!valid && !same_error(&verr, &rerr))
		mismatch("validate and reference walker report different errors");

	/* the iterator */
	iter_seen = 0;
	if (minidb_chain_iter_init(&it, rec, len, &ierr))
	{
		while (minidb_chain_iter_next(&it, &ref, &ierr, &damaged))
		{
			MinidbVersionData fv;

			if (ref.index != seen)
				mismatch("iterator skipped from %d to %d", seen, ref.index);
			if ((char *) ref.vh != rec + ref.offset ||
				ref.offset != MAXALIGN(ref.offset) ||
				(uint64) ref.offset + ref.vh->vh_len > len)
				mismatch("iterator's ref %d is inconsistent", seen);
			if (seen < MAX_ITER_VERSIONS)
			{
				minidb_version_get(rec, &ref, &iter_versions[seen]);
				iter_seen = seen + 1;
			}
			if (valid)
			{
				minidb_version_get(rec, &ref, &fv);
				if (!same_version(&fv, &vs[seen]))
					mismatch("iterator's version %d differs from reference", seen);
				if (minidb_version_size(&vs[seen]) != ref.vh->vh_len)
					mismatch("version %d: size %u but vh_len %u", seen,
							 minidb_version_size(&vs[seen]), ref.vh->vh_len);
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

	/* the visibility cuts */
	memset(&p, 0, sizeof(p));
	if (valid)
		p.nversions = n;
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
		for (k = 0; k <= kmax; k += step)
		{
			p.oldest_k = k;
			compare_walkers(rec, len, valid, &verr, vs, n, &p);
		}
		p.oldest_k = kmax;		/* sees everything (and the head) */
		compare_walkers(rec, len, valid, &verr, vs, n, &p);
	}
	/* xid horizons: one per distinct xmin, plus none and all */
	p.kind = 1;
	p.inprogress = seed;
	p.horizon = 0;
	compare_walkers(rec, len, valid, &verr, vs, n, &p);
	p.horizon = MaxTransactionId;
	compare_walkers(rec, len, valid, &verr, vs, n, &p);
	for (i = 0; valid && i < n && i < 64; i++)
	{
		p.horizon = vs[i].xmin;
		compare_walkers(rec, len, valid, &verr, vs, n, &p);
		p.horizon = vs[i].xmin + 1;
		compare_walkers(rec, len, valid, &verr, vs, n, &p);
	}

	if (n > 0)
		minidb_chain_free_all(vs, n);
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
	uint8		damage;
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
		if (!same_version(&vs[i], &model.v[i]))
			mismatch("built version %d differs from the model", i);

	/* the other format holds the same versions */
	if (minidb_record_header(rec)->rh_format != format ||
		minidb_record_header(rec2)->rh_format != other)
		mismatch("prepend or prune changed a record's format");
	n2 = minidb_chain_decode_all(rec2, len2, &vs2, &err);
	if (n2 != n)
		mismatch("format %d: %d versions, format %d: %d (version %d, field %s: %s)",
				 format, n, other, n2, err.version, n2 < 0 ? err.field : "",
				 n2 < 0 ? err.detail : "");
	for (i = 0; i < n; i++)
		if (!same_version(&vs[i], &vs2[i]))
			mismatch("version %d differs between the formats", i);
	if ((int64) (format == MINIDB_FORMAT_V2 ? len - len2 : len2 - len) !=
		(int64) MINIDB_V2_DATA_START(n) - MINIDB_RECORD_HDRSZ)
		mismatch("V2 length is not V1's plus the directory");
	minidb_chain_free_all(vs, n);
	minidb_chain_free_all(vs2, n2);
	/* valid: every cut, both walkers; exactly len2 bytes for ASan */
	exact = malloc(len2);
	memcpy(exact, rec2, len2);
	check_record(exact, len2, seed);
	free(exact);
	free(rec2);

	/* optional damage */
	damage = next_byte(r);
	rec = ensure(rec, &cap, len + 64);
	switch (damage & 3)
	{
		case 1:
			{
				uint32		pos = ((uint32) next_byte(r) << 8 | next_byte(r)) % len;

				rec[pos] ^= (char) (damage | 1);
				break;
			}
		case 2:
			len -= Min(len - 1, (uint32) (damage >> 2) + 1);
			if (damage & 0x80 && len >= MINIDB_RECORD_HDRSZ)
				minidb_record_header(rec)->rh_len = len;
			break;
		case 3:
			memset(rec + len, damage, (damage >> 2) % 64);
			len += (damage >> 2) % 64;
			minidb_record_header(rec)->rh_len = len;
			break;
		default:
			break;
	}

	exact = malloc(len ? len : 1);
	memcpy(exact, rec, len);
	check_record(exact, len, seed);
	free(exact);
	free(rec);
}

int			LLVMFuzzerInitialize(int *argc, char ***argv);
int			LLVMFuzzerTestOneInput(const uint8 *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	clock_gettime(CLOCK_MONOTONIC, &fuzz_start);
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

	if (data[0] & 1)
		run_program(&r, seed, (data[0] & 2) ? MINIDB_FORMAT_V2 : MINIDB_FORMAT_V1);
	else
	{
		/* exactly r.len bytes: ASan catches a read one past the record */
		char	   *rec = malloc(r.len ? r.len : 1);

		memcpy(rec, r.p, r.len);
		check_record(rec, (uint32) r.len, seed);
		free(rec);
	}
	return 0;
}
