--
-- am_unsupported: what minidb does not support yet fails with a clear
-- FEATURE_NOT_SUPPORTED error and changes nothing.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS minidb_am;
RESET client_min_messages;
CREATE SCHEMA am_unsupported;
SET search_path = am_unsupported, public;
\set VERBOSITY sqlstate

CREATE TABLE m (id int PRIMARY KEY, v text) USING minidb;
INSERT INTO m VALUES (1, 'one');

-- INSERT ... ON CONFLICT: when the server's pre-check finds the conflict,
-- DO NOTHING needs no insertion and works as on heap; an insertion that
-- would have to be speculative is refused
INSERT INTO m VALUES (1, 'again') ON CONFLICT DO NOTHING;
INSERT INTO m VALUES (2, 'two') ON CONFLICT (id) DO UPDATE SET v = excluded.v;
INSERT INTO m VALUES (3, 'three') ON CONFLICT DO NOTHING;
\set VERBOSITY default
INSERT INTO m VALUES (3, 'three') ON CONFLICT DO NOTHING;
SELECT * FROM m ORDER BY id;

-- the table is still fully usable
INSERT INTO m VALUES (2, 'two');
UPDATE m SET v = 'uno' WHERE id = 1;
SELECT * FROM m ORDER BY id;

DROP SCHEMA am_unsupported CASCADE;
