import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, randomUUID, sign as signEd25519, verify as verifySignature } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { prettyFactory } from 'pino-pretty';
import { runAuditPurge } from '../../src/audit/cli/audit-purge.command';
import { runAuditVerify } from '../../src/audit/cli/audit-verify.command';
import { SEALED_COLUMNS } from '../../src/audit/seal/persistence/event-hash.sql';
import { HUMAN_READABLE } from '../../src/common/runtime/logging';
import { startTestApp, TEST_AUDIT_SIGNING_KEY, TestApp } from '../support/app';
import { cutAuditChain } from '../support/audit';
import { createTestDatabase } from '../support/database';
import { waitFor } from '../support/wait-for';

interface Finding {
  kind: string;
  detail: string;
  checkpoint?: number;
  event_id?: string;
  position?: number;
}

interface Verdict {
  code: number;
  findings: Finding[];
  summary: { status: string; events: number; checkpoints: number; findings: number; newest_checkpoint: { seq: number } | null; unsealed: { events: number } };
  err: string[];
}

const SCRATCH = mkdtempSync(join(tmpdir(), 'pgw-seal-'));

/**
 * The sealed audit log, on real PostgreSQL: events bound into a signed chain within seconds, and
 * `npm run audit:verify` naming what a superuser changed behind the service's back.
 */
describe('sealed audit log', () => {
  let t: TestApp;
  let admin: string;

  async function verify(args: string[] = [], env: Record<string, string> = {}, url = t.database.url): Promise<Verdict> {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runAuditVerify(
      args,
      { DATABASE_URL: url, AUDIT_SIGNING_KEY: TEST_AUDIT_SIGNING_KEY, LOG_LEVEL: 'warn', ...env },
      { out: (line) => out.push(line), err: (line) => err.push(line) },
    );
    const lines = out.map((line) => JSON.parse(line) as Record<string, unknown>);
    return {
      code,
      findings: lines.filter((line) => line.finding).map((line) => line.finding as Finding),
      summary: lines.find((line) => line.status) as Verdict['summary'],
      err,
    };
  }

  /** As a superuser with the append-only triggers off: what the service's own role can never do. */
  async function tamper(sql: string, params: unknown[] = []): Promise<void> {
    const client = new Client({ connectionString: t.database.ownerUrl });
    await client.connect();
    try {
      await client.query('BEGIN');
      await client.query('SET LOCAL session_replication_role = replica');
      await client.query(sql, params);
      await client.query('COMMIT');
    } finally {
      await client.end();
    }
  }

  async function unsealed(url = t.database.ownerUrl): Promise<number> {
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM audit_events e
          WHERE NOT EXISTS (SELECT 1 FROM audit_checkpoints c WHERE (e.tx, e.id) <= (c.end_tx, c.end_id))`,
      );
      return rows[0].n;
    } finally {
      await client.end();
    }
  }

  async function allSealed(): Promise<void> {
    await waitFor(async () => (await unsealed()) === 0, { timeoutMs: 5000, intervalMs: 50, what: 'every audit event sealed' });
  }

  async function serve(count: number): Promise<void> {
    await Promise.all(
      Array.from({ length: count }, () =>
        fetch(`${t.baseUrl}/api/v1/me`, { headers: { authorization: `Bearer ${admin}` } }).then((response) => response.arrayBuffer()),
      ),
    );
  }

  /**
   * Events written while an older transaction stays open are sealed only once it ends: with one
   * held open, `count` events committed one by one land in one checkpoint, in a known order.
   */
  async function eventsInOneCheckpoint(count: number): Promise<{ id: string; tx: string }[]> {
    const blocker = new Client({ connectionString: t.database.url });
    await blocker.connect();
    const ids: string[] = [];
    try {
      await blocker.query('BEGIN');
      await blocker.query('SELECT pg_current_xact_id()');
      for (let i = 0; i < count; i++) {
        const id = randomUUID();
        ids.push(id);
        await t.dataSource.query(`INSERT INTO audit_events (id, request_id, operation, phase) VALUES ($1, 'seal-test', 'balance.read', 'succeeded')`, [id]);
      }
      await blocker.query('COMMIT');
    } finally {
      await blocker.end();
    }
    await allSealed();
    const rows: { id: string; tx: string; seqs: string }[] = await t.asOwner(
      `SELECT e.id, e.tx::text AS tx,
              (SELECT min(c.seq) FROM audit_checkpoints c WHERE (e.tx, e.id) <= (c.end_tx, c.end_id))::text AS seqs
         FROM audit_events e WHERE e.id = ANY($1) ORDER BY e.tx, e.id`,
      [ids],
    );
    expect(new Set(rows.map((row) => row.seqs)).size).toBe(1);
    return rows;
  }

  beforeAll(async () => {
    t = await startTestApp();
    admin = await t.createClient('admin', { name: 'compliance' });
  });
  afterAll(async () => {
    await t.close();
  });

  describe('sealing', () => {
    it('when requests are served, then every event is sealed within 5 seconds and verify reports the log intact with its count and newest checkpoint', async () => {
      await serve(30);

      await allSealed();
      const verdict = await verify();

      const [{ events, newest }]: { events: number; newest: string }[] = await t.asOwner(
        'SELECT (SELECT count(*)::int FROM audit_events) AS events, (SELECT max(seq)::text FROM audit_checkpoints) AS newest',
      );
      expect(verdict.findings).toEqual([]);
      expect(verdict.code).toBe(0);
      expect(verdict.summary).toMatchObject({ status: 'intact', events, findings: 0, newest_checkpoint: { seq: Number(newest) }, unsealed: { events: 0 } });
      expect(events).toBeGreaterThanOrEqual(30);
    });

    it('when a checkpoint is written, then it is logged too, signed so that anyone with the public key can check it outside the database', async () => {
      await serve(3);
      await allSealed();

      const logged = t.logs.lines
        .filter((line) => line.audit_checkpoint)
        .map((line) => line.audit_checkpoint as { seq: number; statement: string; key_id: string; ed25519_signature: string });
      const publicKey = createPublicKey(TEST_AUDIT_SIGNING_KEY);
      expect(logged.length).toBeGreaterThan(0);
      for (const checkpoint of logged) {
        expect(verifySignature(null, Buffer.from(checkpoint.statement), publicKey, Buffer.from(checkpoint.ed25519_signature, 'base64'))).toBe(true);
      }
      const [{ seq }]: { seq: string }[] = await t.asOwner('SELECT max(seq)::text AS seq FROM audit_checkpoints');
      expect(logged.map((checkpoint) => checkpoint.seq)).toContain(Number(seq));
    });

    it('when a transaction commits after later ones, then nothing after it is sealed until it commits, and then everything is, and verify is clean', async () => {
      const late = new Client({ connectionString: t.database.url });
      await late.connect();
      const lateId = randomUUID();
      let lateTx: string;
      try {
        await late.query('BEGIN');
        await late.query(`INSERT INTO audit_events (id, request_id, operation, phase) VALUES ($1, 'late-commit', 'balance.read', 'succeeded')`, [lateId]);
        lateTx = (await late.query<{ tx: string }>('SELECT pg_current_xact_id()::text AS tx')).rows[0].tx;
        await serve(10);
        // The sealer runs every second; give it two turns while the late transaction is open.
        await new Promise((resolve) => setTimeout(resolve, 2200));
        const [{ beyond }]: { beyond: number }[] = await t.asOwner('SELECT count(*)::int AS beyond FROM audit_checkpoints WHERE end_tx >= $1', [lateTx]);
        expect(beyond).toBe(0);
        await late.query('COMMIT');
      } finally {
        await late.end();
      }

      await allSealed();
      const verdict = await verify();

      expect(verdict.findings).toEqual([]);
      expect(verdict.code).toBe(0);
    });

    it('when two service instances write at once, then every event of both is sealed once and verify is clean', async () => {
      const second = await startTestApp({}, { database: t.database });
      try {
        const secondAdmin = await second.createClient('admin', { name: 'second-desk' });
        await Promise.all([
          serve(40),
          ...Array.from({ length: 40 }, () =>
            fetch(`${second.baseUrl}/api/v1/me`, { headers: { authorization: `Bearer ${secondAdmin}` } }).then((response) => response.arrayBuffer()),
          ),
        ]);
        await allSealed();
      } finally {
        await second.app.close();
        await second.sandbox.close();
      }

      const verdict = await verify();

      expect(verdict.findings).toEqual([]);
      expect(verdict.code).toBe(0);
      const [{ overlaps }]: { overlaps: number }[] = await t.asOwner(
        `SELECT count(*)::int AS overlaps FROM audit_events e
          WHERE (SELECT count(*) FROM audit_checkpoints c
                  WHERE c.kind = 'seal' AND (e.tx, e.id) <= (c.end_tx, c.end_id)
                    AND (e.tx, e.id) > ((c.statement::json #>> '{after,tx}')::bigint, (c.statement::json #>> '{after,id}')::uuid)) <> 1`,
      );
      expect(overlaps).toBe(0);
    });

    it('when a column is added to audit_events, then the seal must cover it: the sealed columns are the table’s, but for its place in seal order', async () => {
      const columns: { column_name: string }[] = await t.asOwner(
        `SELECT column_name FROM information_schema.columns WHERE table_name = 'audit_events' ORDER BY column_name`,
      );

      expect([...SEALED_COLUMNS, 'tx'].sort()).toEqual(columns.map((column) => column.column_name).sort());
    });
  });

  describe('checkpoints kept outside the database (--checkpoints)', () => {
    it('when the file is the service’s log, then its checkpoints are counted as read and verified, and the log is intact', async () => {
      await serve(2);
      await allSealed();
      const logFile = join(SCRATCH, 'kept.log');
      writeFileSync(logFile, t.logs.text);
      const kept = t.logs.lines.filter((line) => line.audit_checkpoint).length;

      const verdict = await verify(['--checkpoints', logFile]);

      expect(verdict.code).toBe(0);
      expect(verdict.summary).toMatchObject({ status: 'intact', external_checkpoints: { read: kept, verified: kept, ignored: 0 } });
    });

    it('when the file holds no checkpoint (the README, say), then verify fails: nothing outside the database was compared', async () => {
      const verdict = await verify(['--checkpoints', join(process.cwd(), 'README.md')]);

      expect(verdict.code).toBe(1);
      expect(verdict.summary).toMatchObject({ status: 'not_compared', findings: 0, external_checkpoints: { read: 0, verified: 0, ignored: 0 } });
      expect(verdict.err.join('\n')).toMatch(/no line in it names a checkpoint/);
    });

    it('when the file’s only checkpoint line was changed, or cut short, then it is counted as ignored and verify fails', async () => {
      await serve(1);
      await allSealed();
      const line = t.logs.text.split('\n').find((text) => text.includes('"audit_checkpoint"'))!;
      const changed = line.replace(/\\"events\\":(\d+)/, (_m, n: string) => `\\"events\\":${Number(n) + 1}`);
      expect(changed).not.toBe(line);
      const logFile = join(SCRATCH, 'changed.log');
      writeFileSync(logFile, `${changed}\n${line.slice(0, line.length / 2)}\n`);

      const verdict = await verify(['--checkpoints', logFile]);

      expect(verdict.code).toBe(1);
      expect(verdict.summary).toMatchObject({
        status: 'not_compared',
        external_checkpoints: { read: 2, verified: 0, ignored: 2, not_json: 1, incomplete: 0, unverified: 1 },
      });
      // Each cause named, not a guess between them.
      expect(verdict.err.join('\n')).toMatch(
        /none of its 2 checkpoint lines could be compared: 1 not readable as JSON .*; 1 whose signature no trusted key verifies/,
      );
    });

    it('when the file is the service’s human-readable log (a terminal’s), then its checkpoints are read from it and verified', async () => {
      await serve(1);
      await allSealed();
      // What the service writes at a terminal: pino-pretty's one coloured line per entry (logging.ts).
      const prettify = prettyFactory(HUMAN_READABLE);
      const logFile = join(SCRATCH, 'terminal.log');
      writeFileSync(
        logFile,
        t.logs.text
          .split('\n')
          .filter(Boolean)
          .map((line) => prettify(line))
          .join(''),
      );
      const kept = t.logs.lines.filter((line) => line.audit_checkpoint).length;
      expect(readFileSync(logFile, 'utf8')).not.toMatch(/^\{/m);

      const verdict = await verify(['--checkpoints', logFile]);

      expect(verdict.code).toBe(0);
      expect(verdict.summary).toMatchObject({ status: 'intact', external_checkpoints: { read: kept, verified: kept, ignored: 0 } });
    });
  });

  describe('what the service’s own role may do to the seal', () => {
    it.each([
      ['UPDATE', `UPDATE audit_checkpoints SET statement = ''`],
      ['DELETE', 'DELETE FROM audit_checkpoints'],
      ['TRUNCATE', 'TRUNCATE audit_checkpoints, audit_manifests'],
      ['DELETE of a manifest', 'DELETE FROM audit_manifests'],
      ['ALTER TABLE … DISABLE TRIGGER ALL', 'ALTER TABLE audit_checkpoints DISABLE TRIGGER ALL'],
      ['DROP TABLE', 'DROP TABLE audit_manifests'],
    ])('when it runs %s on the checkpoints, then the database refuses it', async (_, sql) => {
      await serve(1);
      await allSealed();
      const [before]: { c: string }[] = await t.asOwner(
        `SELECT (SELECT string_agg(statement, '|' ORDER BY seq) FROM audit_checkpoints) || (SELECT count(*) FROM audit_manifests)::text AS c`,
      );

      await expect(t.dataSource.query(sql)).rejects.toThrow(/permission denied|must be owner/);
      const [after]: { c: string }[] = await t.asOwner(
        `SELECT (SELECT string_agg(statement, '|' ORDER BY seq) FROM audit_checkpoints) || (SELECT count(*) FROM audit_manifests)::text AS c`,
      );
      expect(after.c).toBe(before.c);
    });

    it('when even the owner updates a checkpoint, then the append-only trigger refuses it', async () => {
      await expect(t.asOwner(`UPDATE audit_checkpoints SET key_id = 'x'`)).rejects.toThrow(/audit_checkpoints is append-only/);
    });
  });

  describe('what a superuser changes, verify names', () => {
    it('when an event is altered, then verify names it and exits non-zero; restored, the log verifies again', async () => {
      await serve(5);
      await allSealed();
      const [victim]: { id: string; http_status: number }[] = await t.asOwner(
        `SELECT id, http_status FROM audit_events WHERE operation = 'client.read' ORDER BY occurred_at DESC LIMIT 1`,
      );

      await tamper('UPDATE audit_events SET http_status = 500 WHERE id = $1', [victim.id]);
      const tampered = await verify();
      await tamper('UPDATE audit_events SET http_status = $2 WHERE id = $1', [victim.id, victim.http_status]);
      const restored = await verify();

      expect(tampered.code).toBe(1);
      expect(tampered.summary.status).toBe('tampered');
      expect(tampered.findings).toEqual([
        expect.objectContaining({ kind: 'altered', event_id: victim.id, checkpoint: expect.any(Number), position: expect.any(Number) }),
      ]);
      expect(restored.findings).toEqual([]);
      expect(restored.code).toBe(0);
    });

    it('when an event is deleted, then verify names it and where it was sealed; put back, the log verifies again', async () => {
      await serve(3);
      await allSealed();
      const [row]: { id: string; record: Record<string, unknown> }[] = await t.asOwner(
        `SELECT id, row_to_json(e) AS record FROM audit_events e ORDER BY occurred_at DESC LIMIT 1`,
      );

      await tamper('DELETE FROM audit_events WHERE id = $1', [row.id]);
      const tampered = await verify();
      await tamper('INSERT INTO audit_events SELECT * FROM json_populate_record(NULL::audit_events, $1)', [JSON.stringify(row.record)]);
      const restored = await verify();

      expect(tampered.code).toBe(1);
      expect(tampered.findings).toEqual([
        expect.objectContaining({ kind: 'deleted', event_id: row.id, checkpoint: expect.any(Number), position: expect.any(Number) }),
      ]);
      expect(restored.findings).toEqual([]);
      expect(restored.code).toBe(0);
    });

    it('when an event is inserted into a sealed range, then verify reports the insertion where it is; removed, the log verifies again', async () => {
      const sealed = await eventsInOneCheckpoint(3);
      const forged = randomUUID();

      await tamper(`INSERT INTO audit_events (id, request_id, operation, phase, tx) VALUES ($1, 'forged', 'balance.read', 'succeeded', $2)`, [
        forged,
        sealed[1].tx,
      ]);
      const tampered = await verify();
      await tamper('DELETE FROM audit_events WHERE id = $1', [forged]);
      const restored = await verify();

      expect(tampered.code).toBe(1);
      expect(tampered.findings).toEqual([expect.objectContaining({ kind: 'inserted', event_id: forged, checkpoint: expect.any(Number) })]);
      expect(restored.findings).toEqual([]);
      expect(restored.code).toBe(0);
    });

    it('when an event is moved to another place in the order, then verify reports the reordering; moved back, the log verifies again', async () => {
      const sealed = await eventsInOneCheckpoint(4);
      const first = sealed[0];
      const last = sealed[sealed.length - 1];
      // Moved next to the last one, it stays inside the same checkpoint's range, out of its sealed order.
      const [moved, to] = first.id < last.id ? [first, last.tx] : [last, first.tx];

      await tamper('UPDATE audit_events SET tx = $2 WHERE id = $1', [moved.id, to]);
      const tampered = await verify();
      await tamper('UPDATE audit_events SET tx = $2 WHERE id = $1', [moved.id, moved.tx]);
      const restored = await verify();

      expect(tampered.code).toBe(1);
      expect(tampered.findings).toEqual([expect.objectContaining({ kind: 'reordered', event_id: moved.id })]);
      expect(restored.findings).toEqual([]);
      expect(restored.code).toBe(0);
    });

    it('when events are sealed, then each statement carries the RFC 9162 tree head of its manifest; one re-signed with another root, by the key itself, is reported', async () => {
      await serve(3);
      await allSealed();
      const [checkpoint]: { seq: string; statement: string; signature: Buffer; entries: Buffer }[] = await t.asOwner(
        `SELECT c.seq::text, c.statement, c.signature, m.entries FROM audit_checkpoints c JOIN audit_manifests m USING (seq) WHERE c.kind = 'seal' ORDER BY c.seq DESC LIMIT 1`,
      );
      const statement = JSON.parse(checkpoint.statement) as { v: number; merkle_root: string };
      // The tree, as RFC 9162 builds it, of the manifest's 48-byte entries.
      const sha = (...parts: Buffer[]) => createHash('sha256').update(Buffer.concat(parts)).digest();
      const head = (leaves: Buffer[]): Buffer => {
        if (leaves.length === 1) return leaves[0];
        const k = 2 ** Math.ceil(Math.log2(leaves.length) - 1);
        return sha(Buffer.from([1]), head(leaves.slice(0, k)), head(leaves.slice(k)));
      };
      const leaves = Array.from({ length: checkpoint.entries.length / 48 }, (_, i) => sha(Buffer.from([0]), checkpoint.entries.subarray(i * 48, i * 48 + 48)));

      expect([statement.v, statement.merkle_root]).toEqual([3, head(leaves).toString('hex')]);

      // A statement signed with another root (the key's holder lying about the tree): its own signature verifies, its root does not.
      const forged = checkpoint.statement.replace(statement.merkle_root, 'ab'.repeat(32));
      const signature = signEd25519(null, Buffer.from(forged), createPrivateKey(TEST_AUDIT_SIGNING_KEY));
      const seq = Number(checkpoint.seq);
      await tamper('UPDATE audit_checkpoints SET statement = $2, signature = $3, head = $4 WHERE seq = $1', [seq, forged, signature, sha(Buffer.from(forged))]);
      const lied = await verify();
      await tamper('UPDATE audit_checkpoints SET statement = $2, signature = $3, head = $4 WHERE seq = $1', [
        seq,
        checkpoint.statement,
        checkpoint.signature,
        sha(Buffer.from(checkpoint.statement)),
      ]);

      expect(lied.findings).toEqual(
        expect.arrayContaining([expect.objectContaining({ kind: 'checkpoint_invalid', checkpoint: seq, detail: expect.stringContaining('Merkle root') })]),
      );
      expect((await verify()).findings).toEqual([]);
    });

    it('when a checkpoint’s statement or manifest is changed, then verify reports that checkpoint', async () => {
      await serve(2);
      await allSealed();
      const [checkpoint]: { seq: string; statement: string; entries: Buffer }[] = await t.asOwner(
        `SELECT c.seq::text, c.statement, m.entries FROM audit_checkpoints c JOIN audit_manifests m USING (seq) ORDER BY c.seq DESC LIMIT 1`,
      );
      const seq = Number(checkpoint.seq);

      await tamper('UPDATE audit_checkpoints SET statement = replace(statement, \'"events":\', \'"events": \') WHERE seq = $1', [seq]);
      const statementChanged = await verify();
      await tamper('UPDATE audit_checkpoints SET statement = $2 WHERE seq = $1', [seq, checkpoint.statement]);
      await tamper(`UPDATE audit_manifests SET entries = entries || '\\x00'::bytea WHERE seq = $1`, [seq]);
      const manifestChanged = await verify();
      await tamper('UPDATE audit_manifests SET entries = $2 WHERE seq = $1', [seq, checkpoint.entries]);
      const restored = await verify();

      expect(statementChanged.code).toBe(1);
      expect(statementChanged.findings).toEqual([expect.objectContaining({ kind: 'checkpoint_invalid', checkpoint: seq })]);
      expect(manifestChanged.findings).toEqual([expect.objectContaining({ kind: 'manifest_altered', checkpoint: seq })]);
      expect(restored.findings).toEqual([]);
    });

    it('when a checkpoint in the middle is removed, then verify reports the gap', async () => {
      await serve(2);
      await allSealed();
      await serve(2);
      await allSealed();
      const [row]: { record: Record<string, unknown>; manifest: Record<string, unknown> }[] = await t.asOwner(
        `SELECT row_to_json(c) AS record, row_to_json(m) AS manifest FROM audit_checkpoints c JOIN audit_manifests m USING (seq)
          WHERE c.seq = (SELECT max(seq) - 1 FROM audit_checkpoints)`,
      );
      const seq = Number(row.record.seq);

      await tamper('DELETE FROM audit_checkpoints WHERE seq = $1', [seq]);
      const tampered = await verify();
      await tamper('INSERT INTO audit_checkpoints SELECT * FROM json_populate_record(NULL::audit_checkpoints, $1)', [JSON.stringify(row.record)]);
      const restored = await verify();

      expect(tampered.code).toBe(1);
      expect(tampered.findings.map((finding) => finding.kind)).toContain('checkpoint_missing');
      expect(tampered.findings.find((finding) => finding.kind === 'checkpoint_missing')?.detail).toContain(`${seq}`);
      expect(restored.findings).toEqual([]);
    });
  });

  describe('signing keys', () => {
    it('when verify does not trust the key that signed, then it says so; given the retired key’s public half, the log verifies', async () => {
      await serve(1);
      await allSealed();
      const newKey = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
      const retiredPublic = createPublicKey(TEST_AUDIT_SIGNING_KEY).export({ type: 'spki', format: 'pem' }).toString();
      const retiredFile = join(SCRATCH, 'retired.pem');
      writeFileSync(retiredFile, retiredPublic);

      const untrusted = await verify([], { AUDIT_SIGNING_KEY: newKey });
      const rotated = await verify([], { AUDIT_SIGNING_KEY: newKey, AUDIT_PUBLIC_KEYS: retiredFile });

      expect(untrusted.code).toBe(1);
      expect(new Set(untrusted.findings.map((finding) => finding.kind))).toEqual(new Set(['checkpoint_unknown_key']));
      expect(rotated.findings).toEqual([]);
      expect(rotated.code).toBe(0);
    });
  });

  describe('audit:verify called wrongly', () => {
    it.each([
      ['a --from that is no date', ['--from', 'yesterday'], /--from must be an ISO 8601/],
      ['--from after --to', ['--from', '2026-11-02T00:00:00Z', '--to', '2026-11-01T00:00:00Z'], /--from must be before --to/],
      ['a --checkpoints file that is not there', ['--checkpoints', join(SCRATCH, 'missing.log')], /no such readable file/],
      ['an option it does not know', ['--since', '2026-11-01'], /Unknown option/],
    ])('when given %s, then it exits 2 with the reason and the usage, and reads nothing', async (_, args, reason) => {
      const verdict = await verify(args);

      expect(verdict.code).toBe(2);
      expect(verdict.err.join('\n')).toMatch(reason);
      expect(verdict.err.join('\n')).toContain('Usage: npm run audit:verify');
    });

    it('when given a window, then it checks only the checkpoints whose events fall in it', async () => {
      await serve(2);
      await allSealed();
      const from = new Date(Date.now() - 60_000).toISOString();

      const windowed = await verify(['--from', from]);
      const before = await verify(['--to', '2000-01-01T00:00:00Z']);

      expect(windowed.code).toBe(0);
      expect(windowed.summary.checkpoints).toBeGreaterThan(0);
      expect(before.summary).toMatchObject({ status: 'intact', checkpoints: 0, events: 0 });
    });
  });

  describe('admin API', () => {
    it('when an admin asks for the newest checkpoints, then they come newest first, signed, and the read is audited', async () => {
      await serve(2);
      await allSealed();
      const requestId = randomUUID();

      const response = await fetch(`${t.baseUrl}/api/v1/audit-checkpoints?limit=3`, {
        headers: { authorization: `Bearer ${admin}`, 'x-request-id': requestId },
      });
      const body = (await response.json()) as {
        data: { checkpoints: { seq: number; kind: string; statement: string; signature: string; head: string; prev_head: string }[] };
      };

      expect(response.status).toBe(200);
      const seqs = body.data.checkpoints.map((checkpoint) => checkpoint.seq);
      expect(seqs).toHaveLength(3);
      expect(seqs).toEqual([...seqs].sort((a, b) => b - a));
      expect(body.data.checkpoints[0].prev_head).toBe(body.data.checkpoints[1].head);
      const publicKey = createPublicKey(TEST_AUDIT_SIGNING_KEY);
      expect(verifySignature(null, Buffer.from(body.data.checkpoints[0].statement), publicKey, Buffer.from(body.data.checkpoints[0].signature, 'base64'))).toBe(
        true,
      );
      const events: { operation: string; route: string }[] = await waitFor(async () => {
        const rows: { operation: string; route: string }[] = await t.dataSource.query(`SELECT operation, route FROM audit_events WHERE request_id = $1`, [
          requestId,
        ]);
        return rows.length > 0 ? rows : undefined;
      });
      expect(events).toEqual([{ operation: 'audit.query', route: '/api/v1/audit-checkpoints' }]);
    });

    it.each([['a partner', 'partner']] as const)('when %s asks, then 403', async (_, role) => {
      const token = await t.createClient(role);

      const response = await fetch(`${t.baseUrl}/api/v1/audit-checkpoints`, { headers: { authorization: `Bearer ${token}` } });

      expect(response.status).toBe(403);
    });

    it('when the limit is out of range, then 400 naming it', async () => {
      const response = await fetch(`${t.baseUrl}/api/v1/audit-checkpoints?limit=1000`, { headers: { authorization: `Bearer ${admin}` } });
      const body = (await response.json()) as { error: { id: string; fields: { field: string }[] } };

      expect(response.status).toBe(400);
      expect(body.error.id).toEqual(expect.any(String));
      expect(body.error.fields.map((field) => field.field)).toEqual(['limit']);
    });
  });

  describe('the newest checkpoints removed (last: the sealer stops for good)', () => {
    it('when the newest checkpoints and their events are removed, then the copy kept outside the database shows it, and the running sealer stops rather than sign over the gap', async () => {
      await serve(2);
      await allSealed();
      await serve(2);
      await allSealed();
      const logFile = join(SCRATCH, 'service.log');
      writeFileSync(logFile, t.logs.text);
      const [{ seq, end_tx, end_id }]: { seq: string; end_tx: string; end_id: string }[] = await t.asOwner(
        'SELECT c.seq::text AS seq, c.end_tx::text AS end_tx, c.end_id::text AS end_id FROM audit_checkpoints c ORDER BY c.seq DESC OFFSET 1 LIMIT 1',
      );

      await tamper(
        `WITH gone AS (DELETE FROM audit_checkpoints WHERE seq > $1 RETURNING seq), m AS (DELETE FROM audit_manifests WHERE seq > $1)
         DELETE FROM audit_events WHERE (tx, id) > ($2::bigint, $3::uuid)`,
        [seq, end_tx, end_id],
      );
      // The log's tree still holds the removed checkpoints' heads: verify alone sees that much.
      const treeRemains = await verify();
      // Removed from the tree too, nothing in the database is left to show it: only the copy does.
      await tamper('DELETE FROM audit_log_tree WHERE seq > $1', [seq]);
      const withoutCopy = await verify();
      const withCopy = await verify(['--checkpoints', logFile]);
      await serve(1);
      await waitFor(() => t.logs.text.includes('Audit sealing stopped'), { timeoutMs: 5000, what: 'the sealer to stop' });

      expect(treeRemains.findings).toEqual([expect.objectContaining({ kind: 'log_tree_altered', checkpoint: Number(seq) })]);
      expect(withoutCopy.code).toBe(0);
      expect(withCopy.code).toBe(1);
      expect(withCopy.findings).toEqual([expect.objectContaining({ kind: 'truncated', checkpoint: Number(seq) + 1 })]);
    });
  });
});

describe('a forged newest checkpoint', () => {
  it('when a checkpoint signed by no trusted key is appended through the service’s own role, then the sealer stops rather than build on it, and verify reports it', async () => {
    const t = await startTestApp();
    try {
      await fetch(`${t.baseUrl}/api/v1/me`);
      await waitFor(async () => (await t.asOwner<{ n: number }>('SELECT count(*)::int AS n FROM audit_checkpoints'))[0].n > 0, {
        timeoutMs: 5000,
        what: 'a first checkpoint',
      });
      const [newest]: { seq: string; statement: string; end_tx: string; end_id: string }[] = await t.asOwner(
        'SELECT c.seq::text AS seq, c.statement, c.end_tx::text AS end_tx, c.end_id::text AS end_id FROM audit_checkpoints c ORDER BY c.seq DESC LIMIT 1',
      );
      const forger = generateKeyPairSync('ed25519').privateKey;
      // Naming the log's tree as it stands, as the owner's trigger requires of the next checkpoint.
      const [log]: { size: number; root: string }[] = await t.asOwner(
        `SELECT t.size::int AS size, encode(audit_log_root(t.size), 'hex') AS root FROM (SELECT coalesce(max(leaf) + 1, 0) AS size FROM audit_log_tree) t`,
      );
      const statement = JSON.stringify({ ...(JSON.parse(newest.statement) as object), seq: Number(newest.seq) + 1, log_size: log.size, log_root: log.root });

      // The owner may insert any checkpoint row (the service's role may not); without the key, only forged ones.
      await t.asOwner(
        `INSERT INTO audit_checkpoints (seq, kind, sealed_at, end_tx, end_id, events, statement, head, key_id, signature)
         VALUES ($1, 'seal', now(), $2, $3, 0, $4, sha256(convert_to($4, 'UTF8')), 'forged', $5)`,
        [Number(newest.seq) + 1, '9223372036854775806', newest.end_id, statement, signEd25519(null, Buffer.from(statement), forger)],
      );
      await fetch(`${t.baseUrl}/api/v1/me`);
      await waitFor(() => t.logs.text.includes('is not signed by a trusted key'), { timeoutMs: 5000, what: 'the sealer to stop' });
      const out: string[] = [];
      const code = await runAuditVerify(
        [],
        { DATABASE_URL: t.database.url, AUDIT_SIGNING_KEY: TEST_AUDIT_SIGNING_KEY, LOG_LEVEL: 'warn' },
        { out: (line) => out.push(line), err: (line) => out.push(line) },
      );

      expect(code).toBe(1);
      expect(
        out
          .map((line) => JSON.parse(line) as { finding?: { kind: string; checkpoint: number } })
          .filter((line) => line.finding)
          .map((line) => line.finding),
      ).toEqual([expect.objectContaining({ kind: 'checkpoint_unknown_key', checkpoint: Number(newest.seq) + 1 })]);
      const [{ n }]: { n: number }[] = await t.asOwner('SELECT count(*)::int AS n FROM audit_checkpoints WHERE seq > $1', [Number(newest.seq) + 1]);
      expect(n).toBe(0);
    } finally {
      await t.close();
    }
  });
});

describe('retention purge of the sealed log', () => {
  it('when audit:purge runs, then sealed events older than AUDIT_RETENTION_DAYS go whole checkpoints at a time, the purge is itself a signed checkpoint, and what is left verifies', async () => {
    const database = await createTestDatabase();
    const env = { DATABASE_URL: database.url, MIGRATIONS_DATABASE_URL: database.ownerUrl, LOG_LEVEL: 'warn', AUDIT_SIGNING_KEY: TEST_AUDIT_SIGNING_KEY };
    const out: string[] = [];
    const io = { out: (line: string) => out.push(line), err: (line: string) => out.push(line) };
    const insert = async (daysAgo: number) => {
      // Dated by the owner (history from before the gateway): the service's role may not write occurred_at.
      const client = new Client({ connectionString: database.ownerUrl });
      await client.connect();
      const id = randomUUID();
      await client.query(
        `INSERT INTO audit_events (id, occurred_at, request_id, operation, phase) VALUES ($1, now() - make_interval(days => $2), 'purge-test', 'balance.read', 'succeeded')`,
        [id, daysAgo],
      );
      await client.end();
      return id;
    };
    try {
      // A year ago, these were sealed as they came: here the purge seals them first, purging nothing yet.
      await runAuditPurge({ ...env, AUDIT_RETENTION_DAYS: '400' }, io);
      const old = [await insert(500), await insert(401)];
      expect(await runAuditPurge({ ...env, AUDIT_RETENTION_DAYS: '3650' }, io)).toBe(0);
      const kept = await insert(399);

      const code = await runAuditPurge({ ...env, AUDIT_RETENTION_DAYS: '400' }, { out: (line) => out.push(line) });
      const verdict = await (async () => {
        const lines: string[] = [];
        const exit = await runAuditVerify([], env, { out: (line) => lines.push(line), err: (line) => lines.push(line) });
        return { exit, lines: lines.map((line) => JSON.parse(line) as Record<string, unknown>) };
      })();
      const client = new Client({ connectionString: database.ownerUrl });
      await client.connect();
      const left = (await client.query<{ id: string }>(`SELECT id FROM audit_events WHERE request_id = 'purge-test'`)).rows;
      const purges = (await client.query<{ statement: string }>(`SELECT statement FROM audit_checkpoints WHERE kind = 'purge'`)).rows;
      await client.end();

      expect(code).toBe(0);
      expect(JSON.parse(out[out.length - 1])).toEqual({ purged: 2, retention_days: 400 });
      expect(left.map((row) => row.id)).toEqual([kept]);
      expect(old).not.toContain(kept);
      expect(purges).toHaveLength(1);
      expect(JSON.parse(purges[0].statement)).toMatchObject({ kind: 'purge', purge: { events: 2 } });
      expect(verdict.lines.filter((line) => line.finding)).toEqual([]);
      expect(verdict.exit).toBe(0);
      expect(verdict.lines[verdict.lines.length - 1]).toMatchObject({ status: 'intact', events: 1 });
    } finally {
      await database.drop();
    }
  });
});

describe('the sealer as operators see it: readiness, /metrics, and events that wait too long', () => {
  let t: TestApp;
  let admin: string;

  const ready = async () =>
    (
      (await (await fetch(`${t.baseUrl}/health/details`, { headers: { authorization: `Bearer ${admin}` } })).json()) as {
        data: { details: { auditSealer: Record<string, unknown> } };
      }
    ).data.details.auditSealer;
  const metrics = async () => (await fetch(`${t.baseUrl}/metrics`, { headers: { authorization: `Bearer ${admin}` } })).text();
  const gauge = (text: string, series: string) => Number(new RegExp(`^${series.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1]);

  beforeAll(async () => {
    t = await startTestApp({ AUDIT_SEAL_MAX_LAG_SECONDS: '5' });
    admin = await t.createClient('admin');
  });
  afterAll(async () => {
    await t.close();
  });

  it('when the sealer runs, then readiness and /metrics say so, with the newest checkpoint and nothing waiting long', async () => {
    await fetch(`${t.baseUrl}/api/v1/me`, { headers: { authorization: `Bearer ${admin}` } });
    await waitFor(async () => ((await ready()).newestCheckpoint as { seq: number } | null)?.seq, { timeoutMs: 5000, what: 'a checkpoint reported' });

    const sealer = await ready();
    const text = await metrics();

    expect(sealer).toMatchObject({
      status: 'up',
      state: 'running',
      newestCheckpoint: { seq: expect.any(Number), sealedAt: expect.any(String) },
      maxLagSeconds: 5,
      lagging: false,
    });
    expect(sealer.oldestUnsealedAgeSeconds).toBeLessThan(5);
    expect(gauge(text, 'audit_sealer_state{state="running"}')).toBe(1);
    expect(gauge(text, 'audit_sealer_state{state="stopped"}')).toBe(0);
    expect(gauge(text, 'audit_seal_newest_checkpoint_seq')).toBe((sealer.newestCheckpoint as { seq: number }).seq);
    expect(gauge(text, 'audit_seal_newest_checkpoint_timestamp_seconds')).toBeGreaterThan(Date.now() / 1000 - 60);
    expect(gauge(text, 'audit_seal_oldest_unsealed_age_seconds')).toBeLessThan(5);
    expect(gauge(text, 'audit_seal_max_lag_seconds')).toBe(5);
  });

  it('when every checkpoint is deleted, then the sealer stops and says why, the events left waiting make it lag, and verify reports them as a finding', async () => {
    await cutAuditChain(t.database.ownerUrl);
    // Lagging once the first event waiting in seal order has waited past the 5 s bound.
    await waitFor(async () => (await ready()).state === 'stopped' && (await ready()).lagging === true, {
      timeoutMs: 15_000,
      what: 'the sealer to stop and lag',
    });

    const sealer = await ready();
    const text = await metrics();
    const out: string[] = [];
    const code = await runAuditVerify(
      [],
      { DATABASE_URL: t.database.url, AUDIT_SIGNING_KEY: TEST_AUDIT_SIGNING_KEY, AUDIT_SEAL_MAX_LAG_SECONDS: '5', LOG_LEVEL: 'warn' },
      { out: (line) => out.push(line), err: (line) => out.push(line) },
    );
    const lines = out.map((line) => JSON.parse(line) as { finding?: { kind: string }; status?: string; unsealed?: { events: number } });

    expect(sealer).toMatchObject({ status: 'up', state: 'stopped', reason: expect.stringMatching(/checkpoints were removed or replaced/), lagging: true });
    expect(sealer.oldestUnsealedAgeSeconds).toBeGreaterThanOrEqual(5);
    expect(gauge(text, 'audit_sealer_state{state="stopped"}')).toBe(1);
    expect(gauge(text, 'audit_seal_oldest_unsealed_age_seconds')).toBeGreaterThan(5);
    expect(code).toBe(1);
    expect(lines.filter((line) => line.finding).map((line) => line.finding!.kind)).toEqual(['unsealed_too_long']);
    expect(lines.find((line) => line.status)).toMatchObject({ status: 'tampered', unsealed: { events: expect.any(Number) } });
    expect(lines.find((line) => line.status)!.unsealed!.events).toBeGreaterThan(1);
  });
});

describe('a sealer that fails', () => {
  it('when the database refuses its checkpoints, then readiness and /metrics say failing, with why, and it recovers by itself once they are accepted again', async () => {
    const t = await startTestApp();
    const owner = new Client({ connectionString: t.database.ownerUrl });
    await owner.connect();
    const role = `"${decodeURIComponent(new URL(t.database.url).username)}"`;
    try {
      const admin = await t.createClient('admin');
      const ready = async () =>
        (
          (await (await fetch(`${t.baseUrl}/health/details`, { headers: { authorization: `Bearer ${admin}` } })).json()) as {
            data: { details: { auditSealer: Record<string, unknown> } };
          }
        ).data.details.auditSealer;
      const state = async () =>
        (await (await fetch(`${t.baseUrl}/metrics`, { headers: { authorization: `Bearer ${admin}` } })).text()).match(
          /^audit_sealer_state\{state="(\w+)"\} 1$/m,
        )?.[1];
      await waitFor(async () => (await ready()).state === 'running', { timeoutMs: 5000, what: 'the sealer to run' });

      await owner.query(`REVOKE EXECUTE ON FUNCTION append_audit_checkpoint(text, varchar, bytea, bytea) FROM ${role}`);
      // A request leaves an event to seal; the sealer's next checkpoint is refused.
      await fetch(`${t.baseUrl}/api/v1/me`, { headers: { authorization: `Bearer ${admin}` } });
      // Readiness reads the sealer's state at once; /metrics gets it at the end of the round.
      await waitFor(async () => (await ready()).state === 'failing' && (await state()) === 'failing', {
        timeoutMs: 10_000,
        what: 'the sealer to report failing',
      });

      expect(await ready()).toMatchObject({ state: 'failing', reason: expect.stringMatching(/the last sealing round failed/) });
      expect(t.logs.text.match(/Audit sealing failed/g)).toHaveLength(1);

      await owner.query(`GRANT EXECUTE ON FUNCTION append_audit_checkpoint(text, varchar, bytea, bytea) TO ${role}`);
      await waitFor(async () => (await ready()).state === 'running' && (await state()) === 'running', { timeoutMs: 10_000, what: 'the sealer to recover' });

      expect((await ready()).reason).toBeUndefined();
      await waitFor(() => t.logs.text.includes('Audit sealing works again'), { timeoutMs: 5000, what: 'the recovery to be logged' });
    } finally {
      await owner.end();
      await t.close();
    }
  });
});

describe('sealing off', () => {
  it('when AUDIT_SEALING is false, then readiness and /metrics say the sealer is off', async () => {
    const t = await startTestApp({ AUDIT_SEALING: 'false' });
    try {
      const admin = await t.createClient('admin');
      const body = (await (await fetch(`${t.baseUrl}/health/details`, { headers: { authorization: `Bearer ${admin}` } })).json()) as {
        data: { details: { auditSealer: Record<string, unknown> } };
      };
      const text = await (await fetch(`${t.baseUrl}/metrics`, { headers: { authorization: `Bearer ${admin}` } })).text();

      expect(body.data.details.auditSealer).toMatchObject({ state: 'off', newestCheckpoint: null, lagging: false });
      expect(text).toMatch(/^audit_sealer_state\{state="off"\} 1$/m);
    } finally {
      await t.close();
    }
  });
});
