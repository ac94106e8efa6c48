/*-------------------------------------------------------------------------
 *
 * gen_seeds.c
 *	  Write the fuzzer's seed corpus (make seeds): a few valid records and
 *	  structured programs in <dir>/valid, a few damaged records in
 *	  <dir>/damaged, in both record formats (V1 first, then V2).  The
 *	  output is committed; rerun only when the record format changes.
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

	/* valid raw records */
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
	((MinidbVersionHeader *) (dmg + minidb_record_dir(dmg)[5]))->vh_len = 0xF000;
	write_seed("damaged", "v2_garbled_middle", 0, dmg, len);
	memcpy(dmg, buf, len);
	minidb_record_dir(dmg)[11] += 8;
	write_seed("damaged", "v2_last_entry", 0, dmg, len);
	memcpy(dmg, buf, len);
	memset(dmg + len, 0, 8);
	minidb_record_header(dmg)->rh_len = len + 8;
	write_seed("damaged", "v2_trailing_bytes", 0, dmg, len + 8);
	minidb_record_format = MINIDB_FORMAT_V1;

	/* damaged records, for the main run only */
	len = chain(buf, 8192, 6);
	memcpy(dmg, buf, len);
	minidb_record_header(dmg)->rh_len = len - 5;
	write_seed("damaged", "truncated_tail", 0, dmg, len - 5);
	memcpy(dmg, buf, len);
	((MinidbVersionHeader *) (dmg + MINIDB_RECORD_HDRSZ))->vh_len = 0xF000;
	write_seed("damaged", "garbled_length", 0, dmg, len);
	memcpy(dmg, buf, len);
	minidb_record_header(dmg)->rh_nversions = 40000;
	write_seed("damaged", "impossible_count", 0, dmg, len);
	memcpy(dmg, buf, len);
	memset(dmg + len, 0, 8);
	minidb_record_header(dmg)->rh_len = len + 8;
	write_seed("damaged", "trailing_bytes", 0, dmg, len + 8);
	return 0;
}
