import { MigrationInterface, QueryRunner } from 'typeorm';
import { APPEND_AUDIT_CHECKPOINT } from './1764662400000-OwnerKeepsTheAuditChain';

/** How append_audit_checkpoint reads the range a seal covers, as OwnerKeepsTheAuditChain wrote it. */
const RANGE_READ = `SELECT count(*), min(e.occurred_at), max(e.occurred_at) INTO n, first_at, last_at
            FROM public.audit_events e WHERE (e.tx, e.id) > (after_tx, after_id) AND (e.tx, e.id) <= (end_tx, end_id);`;

/**
 * The same, in seal order and at most one event more than the statement claims: always along the
 * (tx, id) index. Counted over the whole range, PostgreSQL may scan the whole table when its
 * estimate of the range is poor (a transaction of 100,000 events: 3 s a checkpoint at 10 million
 * events). One event more than claimed is enough to refuse a statement that claims too few.
 */
const RANGE_READ_BY_INDEX = `SELECT count(*), min(r.occurred_at), max(r.occurred_at) INTO n, first_at, last_at
            FROM (SELECT e.occurred_at FROM public.audit_events e WHERE (e.tx, e.id) > (after_tx, after_id) AND (e.tx, e.id) <= (end_tx, end_id)
                  ORDER BY e.tx, e.id LIMIT greatest((s->>'events')::bigint, 0) + 1) r;`;

function replacing(definition: string): string {
  if (!definition.includes(RANGE_READ)) throw new Error('append_audit_checkpoint is not as OwnerKeepsTheAuditChain1764662400000 made it');
  return definition.replace('CREATE FUNCTION', 'CREATE OR REPLACE FUNCTION');
}

/**
 * The log's tree (docs/security.md, "Receipts"): an RFC 9162 Merkle tree whose leaves are the
 * checkpoints' heads, in order, from the first checkpoint whose statement carries it (version 3).
 * Each such statement names the tree of the checkpoints before it (`log_size`, `log_root`), so a
 * partner holding two checkpoints checks, with a consistency proof, that the later one's history
 * holds the earlier one's.
 *
 * - `audit_log_tree`: one row per leaf, written only by the owner's trigger on audit_checkpoints
 *   (checkpoints are added only through the owner's append_audit_checkpoint), append-only like the
 *   rest of the audit log, never purged (32 bytes and about two hashes per checkpoint). A row holds
 *   the hashes of the perfect subtrees that end at its leaf, of sizes 1, 2, 4…: any node a proof
 *   needs is one row's, read by primary key.
 * - The trigger refuses a version 3 statement whose `log_size` and `log_root` are not the tree of
 *   the leaves so far, then appends the checkpoint's head as the next leaf. Once the tree has begun,
 *   it refuses an older statement (an older replica's sealer, during a rolling upgrade, stops
 *   until it is replaced): every checkpoint after the first version 3 one is a leaf.
 * - `audit_log_root(n)`: the head of the tree of the first n leaves, from O(log n) rows.
 * - append_audit_checkpoint reads a seal's range along the (tx, id) index (RANGE_READ_BY_INDEX).
 */
export class AuditLogTree1765008000000 implements MigrationInterface {
  name = 'AuditLogTree1765008000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "audit_log_tree" (
        "leaf" bigint PRIMARY KEY CONSTRAINT "audit_log_tree_leaf_check" CHECK ("leaf" >= 0),
        "seq" bigint NOT NULL CONSTRAINT "audit_log_tree_seq_key" UNIQUE,
        "nodes" bytea NOT NULL CONSTRAINT "audit_log_tree_nodes_check" CHECK (length("nodes") % 32 = 0 AND length("nodes") > 0)
      )`);
    await queryRunner.query(`
      CREATE TRIGGER "audit_log_tree_append_only" BEFORE UPDATE OR DELETE ON "audit_log_tree"
      FOR EACH ROW EXECUTE FUNCTION audit_events_append_only()`);
    await queryRunner.query(`
      CREATE TRIGGER "audit_log_tree_no_truncate" BEFORE TRUNCATE ON "audit_log_tree"
      FOR EACH STATEMENT EXECUTE FUNCTION audit_events_append_only()`);

    await queryRunner.query(`
      CREATE FUNCTION audit_log_root(n bigint) RETURNS bytea
      LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
      DECLARE
        parts bytea[] := '{}';
        start bigint := 0;
        size bigint;
        r bytea;
      BEGIN
        IF n IS NULL OR n < 0 THEN
          RETURN NULL;
        END IF;
        IF n = 0 THEN
          RETURN sha256(''::bytea);
        END IF;
        -- The perfect subtrees of n, largest first; each is the node of its size at its last leaf.
        FOR b IN REVERSE 62..0 LOOP
          size := 1::bigint << b;
          IF n & size <> 0 THEN
            parts := parts || substring((SELECT t.nodes FROM public.audit_log_tree t WHERE t.leaf = start + size - 1) FROM b * 32 + 1 FOR 32);
            start := start + size;
          END IF;
        END LOOP;
        r := parts[array_length(parts, 1)];
        FOR i IN REVERSE array_length(parts, 1) - 1 .. 1 LOOP
          r := sha256('\\x01'::bytea || parts[i] || r);
        END LOOP;
        RETURN r;
      END $$`);

    await queryRunner.query(`
      CREATE FUNCTION audit_log_tree_append() RETURNS trigger
      LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
      DECLARE
        s jsonb := NEW.statement::jsonb;
        n bigint;
        cur bytea;
        nodes bytea;
        k int := 0;
      BEGIN
        IF jsonb_typeof(s->'v') IS DISTINCT FROM 'number' OR (s->>'v') !~ '^[1-9][0-9]*$' THEN
          RAISE EXCEPTION 'audit checkpoint #% names no statement version', NEW.seq USING ERRCODE = 'check_violation';
        END IF;
        IF (s->>'v')::int < 3 THEN
          -- An older statement names no tree, and once the tree has begun none may follow: every
          -- checkpoint after the first version 3 one is a leaf (an older replica's sealer stops here).
          IF s ? 'log_size' OR s ? 'log_root' OR EXISTS (SELECT 1 FROM public.audit_log_tree) THEN
            RAISE EXCEPTION 'audit checkpoint #% is of version %, but the log''s tree requires version 3', NEW.seq, s->>'v' USING ERRCODE = 'check_violation';
          END IF;
          RETURN NULL;
        END IF;
        SELECT coalesce(max(t.leaf) + 1, 0) INTO n FROM public.audit_log_tree t;
        IF (s->>'log_size')::bigint IS DISTINCT FROM n OR (s->>'log_root') IS DISTINCT FROM encode(public.audit_log_root(n), 'hex') THEN
          RAISE EXCEPTION 'audit checkpoint #% does not name the tree of the checkpoints before it', NEW.seq USING ERRCODE = 'check_violation';
        END IF;
        cur := sha256('\\x00'::bytea || NEW.head);
        nodes := cur;
        -- Each perfect subtree this leaf completes: its left half ends 2^k leaves back.
        WHILE (n + 1) % (1::bigint << (k + 1)) = 0 LOOP
          cur := sha256('\\x01'::bytea || substring((SELECT t.nodes FROM public.audit_log_tree t WHERE t.leaf = n - (1::bigint << k)) FROM k * 32 + 1 FOR 32) || cur);
          nodes := nodes || cur;
          k := k + 1;
        END LOOP;
        INSERT INTO public.audit_log_tree (leaf, seq, nodes) VALUES (n, NEW.seq, nodes);
        RETURN NULL;
      END $$`);
    await queryRunner.query(`REVOKE ALL ON FUNCTION audit_log_tree_append() FROM PUBLIC`);
    await queryRunner.query(`REVOKE ALL ON FUNCTION audit_log_root(bigint) FROM PUBLIC`);
    await queryRunner.query(`
      CREATE TRIGGER "audit_checkpoints_log_tree" AFTER INSERT ON "audit_checkpoints"
      FOR EACH ROW EXECUTE FUNCTION audit_log_tree_append()`);
    await queryRunner.query(replacing(APPEND_AUDIT_CHECKPOINT).replace(RANGE_READ, RANGE_READ_BY_INDEX));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(replacing(APPEND_AUDIT_CHECKPOINT));
    await queryRunner.query(`DROP TRIGGER "audit_checkpoints_log_tree" ON "audit_checkpoints"`);
    await queryRunner.query(`DROP FUNCTION audit_log_tree_append()`);
    await queryRunner.query(`DROP FUNCTION audit_log_root(bigint)`);
    await queryRunner.query(`DROP TABLE "audit_log_tree"`);
  }
}
