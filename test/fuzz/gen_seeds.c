/*-------------------------------------------------------------------------
 *
 * gen_seeds.c
 *	  Write the fuzzer's seed corpus (make seeds): a few valid records and
 *	  structured programs in <dir>/valid, a few damaged records in
 *	  <dir>/damaged, in every record format (V1, V2, then V3).  The output
 *	  is committed; rerun only when the record format or the program
 *	  encoding of fuzz_chain.c changes.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres_fe.h"

#include "chain_shim.h"
#include "access/transam.h"
#include "chain.h"

static const char *outdir;

static void
write_seed(const char *sub, const char *name, uint8 mode,
		   const void *payload, uint32 len)
{
	char		path[1024];
	FILE	   *f;
	static const uint8 seed[8] = {0x00, 0x00, 0x00, 0x05, 0x80, 0x00, 0x00, 0x12};

	snprintf(path, sizeof(path), "%s/%s/%s", outdir, sub, name);
	f = fopen(path, "wb");
	if (f == NULL)
	{
		perror(path);
		exit(1);
	}
	fwrite(&mode, 1, 1, f);
	fwrite(seed, 1, sizeof(seed), f);
	fwrite(payload, 1, len, f);
	fclose(f);
}

static MinidbVersionData
version(TransactionId xmin, uint16 flags, const char *text)
{
	MinidbVersionData v;

	memset(&v, 0, sizeof(v));
	v.xmin = xmin;
	v.flags = flags;
	if (flags & MINIDB_V_NODATA_MASK)
		return v;
	v.natts = 1;
	v.data = text;
	v.datalen = strlen(text);
	return v;
}

/* A chain of n versions, with nulls, tombstones and aborted ones mixed in */
static uint32
chain(char *buf, uint32 size, int n)
{
	static const bits8 bitmap[1] = {0x02};
	uint32		len;
	int			i;
	MinidbVersionData v = version(500, MINIDB_V_XMIN_COMMITTED | MINIDB_V_FROZEN, "\x0f" "oldest");

	len = minidb_record_build(buf, size, &v);
	for (i = 1; i < n; i++)
	{
		v = version(500 + i, i % 3 == 0 ? MINIDB_V_XMIN_ABORTED : MINIDB_V_XMIN_COMMITTED, "\x0f" "value!");
		if (i % 4 == 1)
		{
			v.flags |= MINIDB_V_HASNULL;
			v.natts = 2;
			v.bitmap = bitmap;
		}
		if (i % 7 == 6)
			v = version(500 + i, MINIDB_V_TOMBSTONE | MINIDB_V_XMIN_ABORTED, NULL);
		len = minidb_record_prepend(buf, size, buf, len, &v);
	}
	return len;
}

/* ---- format V3 ---- */

/*
 * Version i of an account-like row, as test_chain_v3.c's model: a balance
 * that changes every version (so older versions are stored as
 * differences), a tail that grows now and then, a rewrite every seventh.
 */
static MinidbVersionData
account(int i, char *space)
{
	MinidbVersionData v;
	static const bits8 bitmap[2] = {0x05, 0x01};
	int32		balance = i * 37;
	uint32		len = 40 + (i / 4) % 5 * 3;

	memset(&v, 0, sizeof(v));
	v.xmin = 600 + i;
	v.cid = i % 3;
	v.flags = (i % 5 == 2 ? MINIDB_V_XMIN_ABORTED : MINIDB_V_XMIN_COMMITTED) |
		MINIDB_V_HASVARWIDTH;
	v.natts = 4;
	memset(space, 'x', len);
	memcpy(space, "acct", 4);
	memcpy(space + 4, &balance, 4);
	if (i % 7 == 6)
		for (uint32 b = 0; b < len; b++)
			space[b] = (char) ('A' + (b * 7 + i) % 26);
	v.data = space;
	v.datalen = len;
	if (i % 5 == 3)
	{
		v.flags |= MINIDB_V_HASNULL;
		v.natts = 9;
		v.bitmap = bitmap;
	}
	return v;
}

/* A V3 record of n account versions, the oldest (n-1) built first */
static uint32
chain3(char *buf, uint32 size, int n)
{
	char		space[128];
	MinidbVersionData v = account(n - 1, space);
	uint32		len = minidb_record_build_as(buf, size, &v, MINIDB_FORMAT_V3);

	for (int i = n - 2; i >= 0; i--)
	{
		v = account(i, space);
		len = minidb_record_prepend(buf, size, buf, len, &v);
	}
	return len;
}

/* Where data version i of a valid V3 record starts */
static uint32
data_version_at(char *rec, uint32 len, int i)
{
	MinidbChainIter it;
	MinidbVersionRef ref;
	MinidbChainError err;
	bool		damaged;

	if (!minidb_chain_iter_init(&it, rec, len, &err))
		abort();
	while (minidb_chain_iter_next(&it, &ref, &err, &damaged))
		if (ref.index == i + (it.has_end ? 1 : 0))
			return ref.offset;
	abort();
}

static void
v3_seeds(char *buf, char *dmg)
{
	MinidbVersionData m;
	MinidbRecordEnd extra;
	MinidbLockers lk;
	ItemPointerData succ;
	uint32		len;
	bool		keep[8];
	char		space[128];

	/* valid raw records */
	len = chain3(buf, 8192, 1);
	write_seed("valid", "raw_v3_one_version", 0, buf, len);
	len = chain3(buf, 8192, 12);
	write_seed("valid", "raw_v3_twelve_versions", 0, buf, len);

	memset(&m, 0, sizeof(m));
	memset(&extra, 0, sizeof(extra));
	m.xmin = 900;
	m.cid = 4;
	m.flags = MINIDB_V_TOMBSTONE | MINIDB_V_COMBOCID;
	len = chain3(buf, 8192, 4);
	len = minidb_record_prepend_ex(buf, 8192, buf, len, &m, 0, &extra);
	write_seed("valid", "raw_v3_deleted", 0, buf, len);

	m.flags = MINIDB_V_MOVED | MINIDB_V_KEYS_UPDATED | MINIDB_V_XMIN_COMMITTED;
	ItemPointerSet(&succ, 3, 4);
	extra.successor = &succ;
	len = chain3(buf, 8192, 3);
	len = minidb_record_prepend_ex(buf, 8192, buf, len, &m, 0, &extra);
	write_seed("valid", "raw_v3_moved", 0, buf, len);

	/* a DELETE by a multixact (byte 0 bit 4: the updater hook is on) */
	m.flags = MINIDB_V_TOMBSTONE | MINIDB_V_XMIN_MULTI;
	m.xmin = 7;
	extra.successor = NULL;
	len = chain3(buf, 8192, 3);
	len = minidb_record_prepend_ex(buf, 8192, buf, len, &m, 0, &extra);
	write_seed("valid", "raw_v3_multi_end_hook", 0x10, buf, len);

	lk.xid = 33;
	lk.mode = MINIDB_LOCK_KEYSHARE;
	lk.multi = true;
	lk.with_updater = false;
	len = chain3(buf, 8192, 5);
	len = minidb_record_set_lockers(buf, 8192, buf, len, &lk);
	write_seed("valid", "raw_v3_locked", 0, buf, len);

	/* a dead row: only the header is left */
	m.flags = MINIDB_V_TOMBSTONE | MINIDB_V_XMIN_COMMITTED;
	m.xmin = 901;
	len = chain3(buf, 8192, 3);
	len = minidb_record_prepend_ex(buf, 8192, buf, len, &m, 0, &extra);
	memset(keep, false, sizeof(keep));
	keep[0] = true;
	len = minidb_record_prune(buf, len, keep);
	write_seed("valid", "raw_v3_dead_header", 0, buf, len);

	/* a speculative insertion */
	{
		MinidbVersionData v = account(0, space);

		ItemPointerSet(&succ, 4242, 0xfffe);
		memset(&extra, 0, sizeof(extra));
		extra.successor = &succ;
		extra.spec = true;
		len = minidb_record_build_ex(buf, 8192, &v, MINIDB_FORMAT_V3, &extra);
		write_seed("valid", "raw_v3_spec", 0, buf, len);
	}

	/*
	 * Structured V3 programs (run_program_v3 in fuzz_chain.c): byte 0 is
	 * 5 (or 7; bit 4 adds the multixact hook), the last four bytes the
	 * damage (0: none).
	 */
	{
		/* updates sharing a prefix and suffix, fresh data, same data; a DELETE */
		static const uint8 p1[] = {
			0x00, 0x05, 10, 0, 4, 48, 7,	/* V3, head: 96 fresh bytes */
			0x00, 0x01, 11, 0, 4, 40, 200, 4, 'a', 'b', 'c', 'd',
			0x08, 0x21, 12, 1, 9, 0x05, 0x01, 100, 100, 3, 'x', 'y', 'z',
			0x01, 0x41, 13, 0, 4, 40, 99,	/* shares nothing */
			0x07, 0x81, 14, 2, 4,	/* the same data */
			0x00, 0xC1, 15, 0, 4, 128, 60, 5, '1', '2', '3', '4', '5',
			0x02, 0x00, 3, 20,	/* DELETE */
		0, 0, 0, 0};
		/* lockers, a multixact, a prune, a move with keys updated and combo cid */
		static const uint8 p2[] = {
			0x20, 0x01, 30, 0, 3, 30, 1, 0x04, 5,
			0x00, 0x01, 31, 0, 3, 128, 128, 2, 'q', 'r',
			0x03, 0x02, 9,
			0x00, 0x11, 32, 1, 3, 200, 10, 1, 'z',
			0x00, 0x01, 33, 0, 3, 10, 200, 6, 'h', 'e', 'l', 'l', 'o', '!',
			0x04, 0x04,
			0x02, 0x16, 4, 40, 7, 3,
			0x06, 0x01,
			0x06, 0x04, 9, 2,
		0, 0, 0, 0};
		/* a token, confirmed; prunes; an end by a multixact, VACUUMed, aborted */
		static const uint8 p3[] = {
			0x10, 0x02, 50, 0, 2, 20, 3, 77,
			0x00, 0x01, 51, 0, 2, 128, 64, 3, 'a', 'a', 'a',
			0x00, 0x01, 52, 0, 2, 64, 128, 3, 'b', 'b', 'b',
			0x00, 0x01, 53, 0, 2, 32, 32, 3, 'c', 'c', 'c',
			0x06, 0x00,
			0x05, 0x0d, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
			0x04, 0x01,
			0x02, 0x08, 0, 12,
			0x06, 0x02, 60,
			0x04, 0x02,
			0x00, 0x01, 54, 0, 2, 255, 0, 2, 'd', 'd',
		0, 0, 0, 0};
		/* V1 with a locker, three updates, converted by a fourth */
		static const uint8 p4[] = {
			0x22, 0x01, 70, 0, 5, 40, 5, 0x00, 3,
			3,
			0x01, 71, 0, 5, 100, 100, 2, 'k', '1',
			0x21, 72, 0, 5, 0x03, 100, 100, 2, 'k', '2',
			0x01, 73, 0, 5, 100, 100, 2, 'k', '3',
			0x00, 0x01, 74, 0, 5, 100, 100, 2, 'k', '4',
			0x00, 0x01, 75, 0, 5, 120, 120, 1, 'k',
			0x02, 0x03, 0, 80,	/* moved to another partition */
			0x04, 0x02,			/* ... aborted */
			0x03, 0x03,			/* no lockers */
		0, 0, 0, 0};
		/* V2 with a token, converted by a move; the move becomes a DELETE */
		static const uint8 p5[] = {
			0x13, 0x01, 90, 0, 1, 10, 9, 5,
			2,
			0x01, 91, 0, 1, 128, 64, 2, 'm', 'n',
			0x01, 92, 0, 1, 128, 64, 2, 'o', 'p',
			0x01, 0x32, 5, 93, 1, 1,
			0x06, 0x03,
			0x05, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
			0x00, 0x01, 94, 0, 1, 128, 128, 1, 'z',
		0, 0, 0, 0};
		/*
		 * A 7000-byte row updated 20 times without a change (tiny
		 * differences), then pruned so that nine versions become whole:
		 * near the format's 65535-byte limit
		 */
		uint8		p6[7 + 20 * 5 + 9 + 4];
		int			n6 = 0;
		uint8		damaged[sizeof(p1)];

		p6[n6++] = 0x00;
		p6[n6++] = 0x01;
		p6[n6++] = 100;
		p6[n6++] = 0;
		p6[n6++] = 2;
		p6[n6++] = 0xF8;		/* fresh data, 7000 bytes */
		p6[n6++] = 5;
		for (int i = 0; i < 20; i++)
		{
			p6[n6++] = 0x00;	/* update: the same data */
			p6[n6++] = 0x81;
			p6[n6++] = 101 + i;
			p6[n6++] = 0;
			p6[n6++] = 2;
		}
		p6[n6++] = 0x05;		/* prune every other of 18 */
		p6[n6++] = 0x55;
		p6[n6++] = 0x55;
		p6[n6++] = 0x01;
		for (int i = 0; i < 5; i++)
			p6[n6++] = 0xff;
		memset(p6 + n6, 0, 4);
		n6 += 4;

		write_seed("valid", "program_v3_updates", 5, p1, sizeof(p1));
		write_seed("valid", "program_v3_moved_locked", 5, p2, sizeof(p2));
		write_seed("valid", "program_v3_moved_locked_hook", 0x15, p2, sizeof(p2));
		write_seed("valid", "program_v3_spec_prune", 7, p3, sizeof(p3));
		write_seed("valid", "program_v3_multi_hook", 0x17, p3, sizeof(p3));
		write_seed("valid", "program_v3_from_v1", 5, p4, sizeof(p4));
		write_seed("valid", "program_v3_from_v2", 5, p5, sizeof(p5));
		write_seed("valid", "program_v3_big", 5, p6, n6);

		/* the same, damaged: the last version's xmin; a difference's bound */
		memcpy(damaged, p1, sizeof(p1));
		damaged[sizeof(p1) - 4] = 0x07;
		write_seed("damaged", "program_v3_last_xmin", 5, damaged, sizeof(p1));
		damaged[sizeof(p1) - 4] = 0x06;
		write_seed("damaged", "program_v3_affix", 5, damaged, sizeof(p1));
	}

	/* damaged raw records, for the main run only */
	len = chain3(buf, 8192, 12);
	memcpy(dmg, buf, len);
	write_seed("damaged", "v3_truncated", 0, dmg, len - 2);
	memset(dmg + len, 0, 4);
	write_seed("damaged", "v3_trailing_bytes", 0, dmg, len + 4);
	memcpy(dmg, buf, len);
	/* a middle version's end in the trailer: the newest reader misses it */
	*(uint16 *) (dmg + len - 2 * (13 - 5)) += 4;
	write_seed("damaged", "v3_trailer_middle", 0, dmg, len);
	memcpy(dmg, buf, len);
	((MinidbVersionHeader *) (dmg + data_version_at(dmg, len, 11)))->vh_xmin = 0;
	write_seed("damaged", "v3_last_xmin", 0, dmg, len);
	memcpy(dmg, buf, len);
	((MinidbVersionHeader *) (dmg + data_version_at(dmg, len, 5)))->vh_flags |= 0x0400;
	write_seed("damaged", "v3_middle_flags", 0, dmg, len);
	memcpy(dmg, buf, len);
	*(uint16 *) (dmg + data_version_at(dmg, len, 1) + MINIDB_VERSION_HDRSZ) = 5000;
	write_seed("damaged", "v3_affix_bound", 0, dmg, len);

	m.flags = MINIDB_V_TOMBSTONE;
	m.xmin = 902;
	memset(&extra, 0, sizeof(extra));
	len = chain3(buf, 8192, 5);
	len = minidb_record_prepend_ex(buf, 8192, buf, len, &m, 0, &extra);
	memcpy(dmg, buf, len);
	dmg[1] |= MINIDB_R3X_COMMITTED | MINIDB_R3X_INVALID;
	write_seed("damaged", "v3_xinfo", 0, dmg, len);
}

int
main(int argc, char **argv)
{
	char	   *buf = palloc0(8192);
	char	   *dmg = palloc0(8192);
	uint32		len;
	MinidbVersionData v;

	if (argc != 2)
	{
		fprintf(stderr, "usage: gen_seeds DIR\n");
		return 2;
	}
	outdir = argv[1];

	/* valid raw records, format V1 */
	minidb_record_format = MINIDB_FORMAT_V1;
	len = chain(buf, 8192, 1);
	write_seed("valid", "raw_one_version", 0, buf, len);
	len = chain(buf, 8192, 3);
	write_seed("valid", "raw_three_versions", 0, buf, len);
	len = chain(buf, 8192, 12);
	write_seed("valid", "raw_twelve_versions", 0, buf, len);
	len = chain(buf, 8192, 2);
	v = version(900, MINIDB_V_TOMBSTONE, NULL);
	len = minidb_record_prepend(buf, 8192, buf, len, &v);
	write_seed("valid", "raw_deleted", 0, buf, len);
	len = chain(buf, 8192, 2);
	v = version(901, MINIDB_V_MOVED | MINIDB_V_XMIN_COMMITTED, NULL);
	len = minidb_record_prepend(buf, 8192, buf, len, &v);
	ItemPointerSet(&minidb_record_header(buf)->rh_successor, 3, 4);
	write_seed("valid", "raw_moved", 0, buf, len);
	len = chain(buf, 8192, 4);
	minidb_record_header(buf)->rh_locker = 777;
	minidb_record_header(buf)->rh_lockmode = MINIDB_LOCK_NOKEYEXCL;
	write_seed("valid", "raw_locked", 0, buf, len);

	/* structured programs (see run_program in fuzz_chain.c); last byte 0: no damage */
	{
		static const uint8 p1[] = {0x00, 10, 0, 1, 5, 'h', 'e', 'l', 'l', 'o',
			0x04, 11, 1, 1, 3, 'a', 'b', 'c',
			0x06, 12, 2, 3, 0x05, 4, 'w', 'x', 'y', 'z',
		0x01, 13, 0, 0x00, 0x00};
		static const uint8 p2[] = {0x0c, 1, 0, 2, 8, '1', '2', '3', '4', '5', '6', '7', '8',
			0x04, 2, 0, 1, 2, 'x', 'y', 0x08, 3, 0, 1, 2, 'z', 'z',
			0x04, 4, 0, 1, 2, 'q', 'q', 0x03, 0x0b,
		0x04, 5, 0, 1, 1, '!', 0x01, 0x00};
		static const uint8 p3[] = {0x00, 7, 0, 3, 4, 'a', 'b', 'c', 'd',
			0x05, 8, 0, 0x04, 9, 0, 1, 0, 0x12, 10, 0, 9, 0xff, 0x01, 2, 'o', 'k',
		0x01, 0x00};

		write_seed("valid", "program_basic", 1, p1, sizeof(p1));
		write_seed("valid", "program_prune", 1, p2, sizeof(p2));
		write_seed("valid", "program_moved", 1, p3, sizeof(p3));
	}

	/* format V2 (version directory): valid raw records and programs */
	minidb_record_format = MINIDB_FORMAT_V2;
	len = chain(buf, 8192, 1);
	write_seed("valid", "raw_v2_one_version", 0, buf, len);
	len = chain(buf, 8192, 7);
	write_seed("valid", "raw_v2_seven_versions", 0, buf, len);
	len = chain(buf, 8192, 60);
	write_seed("valid", "raw_v2_sixty_versions", 0, buf, len);
	len = chain(buf, 8192, 2);
	v = version(901, MINIDB_V_MOVED | MINIDB_V_XMIN_COMMITTED, NULL);
	len = minidb_record_prepend(buf, 8192, buf, len, &v);
	ItemPointerSet(&minidb_record_header(buf)->rh_successor, 3, 4);
	write_seed("valid", "raw_v2_moved", 0, buf, len);
	{
		/* mode 3: structured, V2 damaged and checked */
		static const uint8 p1[] = {0x00, 10, 0, 1, 5, 'h', 'e', 'l', 'l', 'o',
			0x04, 11, 1, 1, 3, 'a', 'b', 'c',
			0x06, 12, 2, 3, 0x05, 4, 'w', 'x', 'y', 'z',
		0x01, 13, 0, 0x00, 0x00};
		static const uint8 p2[] = {0x0c, 1, 0, 2, 8, '1', '2', '3', '4', '5', '6', '7', '8',
			0x04, 2, 0, 1, 2, 'x', 'y', 0x08, 3, 0, 1, 2, 'z', 'z',
			0x04, 4, 0, 1, 2, 'q', 'q', 0x03, 0x0b,
		0x04, 5, 0, 1, 1, '!', 0x01, 0x00};

		write_seed("valid", "program_v2_basic", 3, p1, sizeof(p1));
		write_seed("valid", "program_v2_prune", 3, p2, sizeof(p2));
	}

	/* damaged V2 records, for the main run only */
	len = chain(buf, 8192, 12);
	memcpy(dmg, buf, len);
	minidb_record_header(dmg)->rh_len = len - 5;
	write_seed("damaged", "v2_truncated_tail", 0, dmg, len - 5);
	memcpy(dmg, buf, len);
	/* a middle version: the newest reader does not visit it */
	((MinidbVersionHeaderV1 *) (dmg + minidb_record_dir(dmg)[5]))->vh_len = 0xF000;
	write_seed("damaged", "v2_garbled_middle", 0, dmg, len);
	memcpy(dmg, buf, len);
	minidb_record_dir(dmg)[11] += 8;
	write_seed("damaged", "v2_last_entry", 0, dmg, len);
	memcpy(dmg, buf, len);
	memset(dmg + len, 0, 8);
	minidb_record_header(dmg)->rh_len = len + 8;
	write_seed("damaged", "v2_trailing_bytes", 0, dmg, len + 8);
	minidb_record_format = MINIDB_FORMAT_V1;

	/* damaged V1 records, for the main run only */
	len = chain(buf, 8192, 6);
	memcpy(dmg, buf, len);
	minidb_record_header(dmg)->rh_len = len - 5;
	write_seed("damaged", "truncated_tail", 0, dmg, len - 5);
	memcpy(dmg, buf, len);
	((MinidbVersionHeaderV1 *) (dmg + MINIDB_RECORD_HDRSZ))->vh_len = 0xF000;
	write_seed("damaged", "garbled_length", 0, dmg, len);
	memcpy(dmg, buf, len);
	minidb_record_header(dmg)->rh_nversions = 40000;
	write_seed("damaged", "impossible_count", 0, dmg, len);
	memcpy(dmg, buf, len);
	memset(dmg + len, 0, 8);
	minidb_record_header(dmg)->rh_len = len + 8;
	write_seed("damaged", "trailing_bytes", 0, dmg, len + 8);

	minidb_record_format = MINIDB_FORMAT_V3;
	v3_seeds(buf, dmg);
	return 0;
}
