/*-------------------------------------------------------------------------
 *
 * ordered_check.h
 *	  The search of minidb_chain_find_visible_ordered against the linear
 *	  walk, on any record; included by test_chain.c and test_chain_v3.c.
 *
 * A model of an MVCC snapshot over a chain in commit order: each version
 * is committed, aborted or running; the snapshot sees the committed ones
 * from index "threshold" on (older ones committed earlier).  Hints in the
 * record say committed for some committed versions (settled), aborted for
 * some aborted ones, nothing for the rest, so the search meets settled and
 * unsettled probes.  The ordered walker must return what the linear walk
 * returns, point at the same version, leave the same "last version passed
 * over that did not abort" (what becomes the visible version's xmax), ask
 * settled() only about settled versions, and, on a chain hinted through,
 * ask few questions.
 *
 *-------------------------------------------------------------------------
 */
#ifndef ORDERED_CHECK_H
#define ORDERED_CHECK_H

typedef struct OrdModel
{
	int			threshold;		/* committed versions from here are seen */
	uint64		aborted;		/* bit index % 64 */
	uint64		running;
	int			calls;			/* questions to visible() */
	int			settled_calls;
	int			last_passed;	/* last rejected version that did not abort */
	bool		bad_settled;	/* settled() asked about an unsettled one */
} OrdModel;

static inline bool
ord_sees(const OrdModel *m, int index)
{
	uint64		bit = UINT64CONST(1) << (index % 64);

	return !((m->aborted | m->running) & bit) && index >= m->threshold;
}

static bool
ord_visible(MinidbVersionHeader *vh, int index, void *arg)
{
	OrdModel   *m = (OrdModel *) arg;
	bool		sees = ord_sees(m, index);

	m->calls++;
	if (!sees && !(m->aborted & (UINT64CONST(1) << (index % 64))))
		m->last_passed = index;
	return sees;
}

static bool
ord_settled(MinidbVersionHeader *vh, int index, void *arg)
{
	OrdModel   *m = (OrdModel *) arg;

	m->settled_calls++;
	if (!MINIDB_VERSION_SETTLED(vh->vh_flags))
		m->bad_settled = true;
	return ord_sees(m, index);
}

/* A small deterministic generator, so that failures repeat */
static uint32
ord_rand(uint32 *state)
{
	*state = *state * 1103515245 + 12345;
	return (*state >> 16) & 0x7fff;
}

/*
 * Give the record's versions the hints of a model: mode 0 hints every
 * committed version, mode 1 a random half, mode 2 none.  Versions
 * index % 64 in m->aborted / m->running are made so.  A V3 row's end
 * (virtual) keeps its hints: the model takes them from it.
 */
static void
ord_apply(char *rec, uint32 len, OrdModel *m, int mode, uint32 *seed)
{
	MinidbChainIter it;
	MinidbVersionRef ref;
	MinidbChainError err;
	bool		damaged;

	if (!minidb_chain_iter_init(&it, rec, len, &err))
		return;
	while (minidb_chain_iter_next(&it, &ref, &err, &damaged))
	{
		MinidbVersionHeader *vh = ref.vh;
		uint64		bit = UINT64CONST(1) << (ref.index % 64);

		if (vh->vh_flags & MINIDB_V_VIRTUAL)
		{
			m->aborted &= ~bit;
			m->running &= ~bit;
			if (vh->vh_flags & MINIDB_V_XMIN_ABORTED)
				m->aborted |= bit;
			else if (!(vh->vh_flags & MINIDB_V_XMIN_COMMITTED))
				m->running |= bit;
			continue;
		}
		vh->vh_flags &= ~(MINIDB_V_XMIN_COMMITTED | MINIDB_V_XMIN_ABORTED |
						  MINIDB_V_FROZEN);
		if (m->aborted & bit)
		{
			if (ord_rand(seed) % 2)
				vh->vh_flags |= MINIDB_V_XMIN_ABORTED;
		}
		else if (!(m->running & bit) &&
				 (mode == 0 || (mode == 1 && ord_rand(seed) % 2)))
			vh->vh_flags |= (ord_rand(seed) % 8 == 0) ?
				MINIDB_V_FROZEN : MINIDB_V_XMIN_COMMITTED;
	}
}

/*
 * One record, many models: false (with a line on stdout) at the first
 * disagreement.  *few says whether the oldest reader of a chain hinted
 * through asked at most 2 log2(n) + 6 questions (V2, V3).
 */
static bool
ordered_agrees(char *rec, uint32 len, uint32 seed, bool *few)
{
	int			n = minidb_record_nversions(rec, len);
	char	   *copy = palloc(Max(len, 1));
	bool		agree = true;

	*few = true;
	for (int t = 0; agree && t <= n + 1; t += (n > 40 && t > 3 && t < n - 3) ? 7 : 1)
		for (int mode = 0; agree && mode < 3; mode++)
			for (int shape = 0; agree && shape < 3; shape++)
			{
				OrdModel	m;
				OrdModel	lm;
				OrdModel	om;
				MinidbVersionRef lref;
				MinidbVersionRef oref;
				MinidbChainError lerr;
				MinidbChainError oerr;
				int			lin;
				int			ord;

				memset(&m, 0, sizeof(m));
				m.threshold = t;
				m.last_passed = -1;
				if (shape >= 1)
				{
					m.aborted = ((uint64) ord_rand(&seed) << 30) ^
						((uint64) ord_rand(&seed) << 15) ^ ord_rand(&seed);
					m.aborted &= ((uint64) ord_rand(&seed) << 30) ^ ord_rand(&seed);
				}
				if (shape == 2)
					m.running = UINT64CONST(1) << (ord_rand(&seed) % Max(n, 1));
				memcpy(copy, rec, len);
				ord_apply(copy, len, &m, mode, &seed);
				lm = m;
				om = m;
				lin = minidb_chain_find_visible(copy, len, ord_visible, &lm,
												&lref, &lerr);
				ord = minidb_chain_find_visible_ordered(copy, len, ord_visible,
														ord_settled, &om,
														&oref, &oerr);
				if (lin != ord || om.bad_settled ||
					(lin >= 0 && (lref.index != oref.index ||
								  lref.offset != oref.offset ||
								  lref.end != oref.end ||
								  lm.last_passed != om.last_passed)) ||
					(lin == -1 && lm.last_passed != om.last_passed))
				{
					printf("# ordered walker: n %d threshold %d mode %d shape %d: linear %d (passed %d), ordered %d (passed %d)%s\n",
						   n, t, mode, shape, lin, lm.last_passed, ord,
						   om.last_passed,
						   om.bad_settled ? ", settled() asked about an unsettled version" : "");
					agree = false;
				}
				/* V1 walks to the tail on every read: no search */
				if (mode == 0 && shape == 0 && t == n - 1 && n >= 16 &&
					minidb_record_format_of(rec) != MINIDB_FORMAT_V1)
				{
					int			questions = om.calls + om.settled_calls;
					int			bound = 6;

					for (int k = n; k > 1; k /= 2)
						bound += 2;
					if (questions > bound)
					{
						printf("# ordered walker: the oldest reader of %d hinted versions asked %d questions (bound %d)\n",
							   n, questions, bound);
						*few = false;
					}
				}
			}
	pfree(copy);
	return agree;
}

#endif							/* ORDERED_CHECK_H */
