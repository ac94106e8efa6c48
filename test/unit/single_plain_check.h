/*-------------------------------------------------------------------------
 *
 * single_plain_check.h
 *	  The newest reader's shortcut, minidb_chain_single_plain, against the
 *	  validator and the walker; included by test_chain.c (V2) and
 *	  test_chain_v3.c (V3), which provide ok().
 *
 * The shortcut must accept the one-version records it is for (else the
 * depth-1 fetch silently loses its fast path), refuse every other shape
 * (two versions, lockers, an end, a tombstone), and never accept a record
 * the validator refuses: every byte of each accepted record is changed
 * (each bit flipped, set to 0 and to 0xFF), and the record is cut short
 * and given trailing bytes; whatever it then accepts must validate, hold
 * one version, and be the version the walker returns, read in place.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SINGLE_PLAIN_CHECK_H
#define SINGLE_PLAIN_CHECK_H

static bool
sp_see_all(MinidbVersionHeader *vh, int index, void *arg)
{
	return true;
}

/* If the shortcut accepts rec, it must agree with validate and the walker */
static bool
sp_agrees(char *rec, uint32 len, bool *accepted)
{
	MinidbVersionData pv;
	MinidbVersionData wv;
	MinidbVersionRef ref;
	MinidbChainError err;

	*accepted = minidb_chain_single_plain(rec, len, &pv);
	if (!*accepted)
		return true;
	if (!minidb_record_validate(rec, len, &err) ||
		minidb_record_nversions(rec, len) != 1)
		return false;
	if (minidb_chain_find_visible(rec, len, sp_see_all, NULL, &ref, &err) != 0 ||
		ref.vh != (MinidbVersionHeader *) (rec + ref.offset))
		return false;
	minidb_version_get(rec, &ref, &wv);
	return pv.xmin == wv.xmin && pv.cid == wv.cid && pv.flags == wv.flags &&
		pv.natts == wv.natts && pv.datalen == wv.datalen &&
		pv.data == wv.data && (pv.bitmap == NULL) == (wv.bitmap == NULL) &&
		(pv.bitmap == NULL || pv.bitmap == wv.bitmap) &&
		!(pv.flags & MINIDB_V_NODATA_MASK);
}

static void
test_single_plain(int format)
{
	static const bits8 bitmap[2] = {0x05, 0x01};
	static const uint16 hints[] = {MINIDB_V_XMIN_COMMITTED, MINIDB_V_FROZEN,
	0, MINIDB_V_XMIN_ABORTED};
	char	   *rec = palloc0(1024);
	char	   *mut = palloc0(1024);
	char		data[64];
	int			bad = 0;
	int			mutants = 0;
	int			accepted_mutants = 0;

	memset(data, 'x', sizeof(data));
	for (int shape = 0; shape < 8; shape++)
	{
		MinidbVersionData v;
		MinidbVersionData v2;
		MinidbLockers lk;
		MinidbRecordEnd extra;
		uint32		len;
		bool		acc;

		memset(&v, 0, sizeof(v));
		v.xmin = FirstNormalTransactionId + 7;
		v.cid = 3;
		v.flags = hints[shape % 4] | MINIDB_V_HASVARWIDTH;
		v.natts = 1;
		v.data = data;
		v.datalen = 8 + shape * 5;
		if (shape >= 4)
		{
			v.flags |= MINIDB_V_HASNULL;
			v.natts = 9;
			v.bitmap = bitmap;
		}
		len = minidb_record_build_as(rec, 1024, &v, format);
		ok(sp_agrees(rec, len, &acc),
		   "single_plain: one-version record (shape %d) agrees with the walker",
		   shape);
		ok(acc, "single_plain: accepts a one-version record (shape %d)",
		   shape);

		/* every byte changed, and the length */
		for (uint32 i = 0; i < len; i++)
		{
			static const int vals[] = {-1, -2, -3, -4, -5, -6, -7, -8, 0, 0xFF};

			for (int k = 0; k < lengthof(vals); k++)
			{
				memcpy(mut, rec, len);
				if (vals[k] < 0)
					mut[i] ^= (char) (1 << (-vals[k] - 1));
				else
					mut[i] = (char) vals[k];
				if (memcmp(mut, rec, len) == 0)
					continue;
				mutants++;
				if (!sp_agrees(mut, len, &acc))
					bad++;
				accepted_mutants += acc;
			}
		}
		for (uint32 cut = 1; cut <= 8 && cut < len; cut++)
		{
			memcpy(mut, rec, len);
			mutants++;
			if (!sp_agrees(mut, len - cut, &acc))
				bad++;
		}
		for (uint32 extra_len = 1; extra_len <= 16; extra_len++)
		{
			memcpy(mut, rec, len);
			memset(mut + len, 0, extra_len);
			mutants++;
			if (!sp_agrees(mut, len + extra_len, &acc))
				bad++;
		}

		/* other shapes are refused */
		memset(&lk, 0, sizeof(lk));
		lk.xid = FirstNormalTransactionId + 9;
		lk.mode = MINIDB_LOCK_SHARE;
		memset(&extra, 0, sizeof(extra));
		extra.lockers = &lk;
		len = minidb_record_build_ex(rec, 1024, &v, format, &extra);
		ok(sp_agrees(rec, len, &acc) && !acc,
		   "single_plain: refuses a locked row (shape %d)", shape);
		len = minidb_record_build_as(rec, 1024, &v, format);
		v2 = v;
		v2.xmin = v.xmin + 1;
		len = minidb_record_prepend_ex(mut, 1024, rec, len, &v2, format,
									   NULL);
		ok(sp_agrees(mut, len, &acc) && !acc,
		   "single_plain: refuses a two-version record (shape %d)", shape);
		len = minidb_record_build_as(rec, 1024, &v, format);
		memset(&v2, 0, sizeof(v2));
		v2.xmin = v.xmin + 1;
		v2.flags = MINIDB_V_TOMBSTONE | MINIDB_V_XMIN_COMMITTED;
		len = minidb_record_prepend_ex(mut, 1024, rec, len, &v2, format,
									   NULL);
		ok(sp_agrees(mut, len, &acc) && !acc,
		   "single_plain: refuses a deleted row (shape %d)", shape);
	}
	ok(bad == 0,
	   "single_plain: %d of %d changed records accepted against the validator or walker (%d accepted in all)",
	   bad, mutants, accepted_mutants);
	pfree(rec);
	pfree(mut);
}

#endif							/* SINGLE_PLAIN_CHECK_H */
