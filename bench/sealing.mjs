// What sealing the audit log costs, and how fast it verifies.
//
// 1. The gateway with sealing on and with it off, in one run: two gateway processes, each on a
//    database of its own on the same PostgreSQL (so that neither seals the other's events), loaded
//    in turn, alternating, `rounds` times. While the sealed one is loaded, the age of its oldest
//    unsealed event is sampled: how long an event waits to be covered under load.
// 2. Verification: `events` events made in PostgreSQL (as the audit-scale bench makes them), sealed
//    by the service's sealer, then verified by the service's verifier, timed. Each fill statement is
//    one transaction of 100,000 events, which the seal orders by id: the heap is read in random order
//    within it, a harder case than a service's log, where each transaction holds a few events.
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { measure, startBenchGateway, startBenchSandbox } from './throughput.mjs';
import { benchDatabase, dist, fixed, percentile, postmasterOf, scratchDir, siblingDatabase, table } from './support.mjs';

const FILL_CHUNK = 100_000;
const FILL = `
INSERT INTO audit_events (id, occurred_at, request_id, client_id, client_name, tenant, operation, phase, http_method, route,
  reference, customer_id, currency, http_status, upstream_status, error_id, error_code, latency_ms, upstream_latency_ms, source_ip, replayed)
SELECT gen_random_uuid(), now() - (random() * interval '400 days'), md5(g::text), md5('client' || (g % 20)::text)::uuid,
       'client-' || (g % 20), 'tenant-' || (g % 5),
       (ARRAY['customer.create','balance.read','bank_account.create','audit.query'])[1 + g % 4],
       CASE WHEN g % 10 = 0 THEN 'rejected' WHEN g % 3 = 0 THEN 'attempted' ELSE 'succeeded' END,
       CASE WHEN g % 4 = 1 THEN 'GET' ELSE 'POST' END, '/api/v1/bank-accounts', gen_random_uuid(),
       md5('customer' || (g % 100000)::text)::uuid, CASE WHEN g % 2 = 0 THEN 'EUR' ELSE 'GBP' END,
       CASE WHEN g % 10 = 0 THEN 400 ELSE 201 END, 200, CASE WHEN g % 10 = 0 THEN gen_random_uuid() END,
       CASE WHEN g % 10 = 0 THEN 'REQUEST.INVALID' END, 5 + g % 50, 3 + g % 40, '10.0.' || (g % 250) || '.' || (g % 200), false
FROM generate_series($1::bigint, $2::bigint) AS g`;

/** Seconds since the oldest event not yet sealed occurred; 0 when all are. */
async function oldestUnsealed(client) {
  const [end] = (await client.query('SELECT end_tx::text AS tx, end_id::text AS id FROM audit_checkpoints ORDER BY seq DESC LIMIT 1')).rows;
  const { rows } = await client.query(
    `SELECT coalesce(extract(epoch FROM clock_timestamp() - min(e.occurred_at)), 0)::float8 AS age FROM audit_events e WHERE (e.tx, e.id) > ($1::bigint, $2::uuid)`,
    [end?.tx ?? '0', end?.id ?? '00000000-0000-0000-0000-000000000000'],
  );
  return rows[0].age;
}

async function onOff({ connections, duration, rounds, log }) {
  const { Client } = await import('pg');
  const dataDir = scratchDir('pgw-bench-seal-');
  const database = await benchDatabase(log);
  log(`database: ${database.description}`);
  const unsealedDb = await siblingDatabase(database, `pgw_bench_unsealed_${process.pid}`);
  const started = [];
  const signingKey = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  try {
    const { sandbox, sandboxUrl } = await startBenchSandbox(dataDir);
    started.push(sandbox);
    const startGateway = async (db, sealing) => {
      const gateway = await startBenchGateway({ database: db, dataDir, sandboxUrl, env: { AUDIT_SEALING: String(sealing), AUDIT_SIGNING_KEY: signingKey } });
      started.push(gateway.process);
      return gateway;
    };
    const sealed = await startGateway(database, true);
    const unsealed = await startGateway(unsealedDb, false);
    const postmaster = await postmasterOf(database.url);
    const watcher = new Client({ connectionString: database.ownerUrl ?? database.url });
    await watcher.connect();
    const results = {};
    const ages = [];
    try {
      for (let round = 1; round <= rounds; round++) {
        for (const call of ['balance', 'bank account']) {
          for (const [name, gateway] of round % 2
            ? [
                ['sealing off', unsealed],
                ['sealing on', sealed],
              ]
            : [
                ['sealing on', sealed],
                ['sealing off', unsealed],
              ]) {
            log(`round ${round}: ${call}, ${name}`);
            const processes = { gateway: { pid: gateway.pid }, ...(postmaster ? { PostgreSQL: { pid: postmaster, tree: true } } : {}) };
            let sampling = true;
            const sampler =
              name === 'sealing on'
                ? (async () => {
                    while (sampling) {
                      ages.push(await oldestUnsealed(watcher));
                      await new Promise((resolve) => setTimeout(resolve, 250));
                    }
                  })()
                : undefined;
            const row = await measure(`${call}: ${name}`, gateway.targets[call], { connections, duration, processes });
            sampling = false;
            await sampler;
            (results[`${call}: ${name}`] ??= []).push(row);
          }
        }
      }
      const settleStart = performance.now();
      while ((await oldestUnsealed(watcher)) > 0) await new Promise((resolve) => setTimeout(resolve, 50));
      const settleSeconds = (performance.now() - settleStart) / 1000;
      const [{ events, checkpoints }] = (
        await watcher.query('SELECT (SELECT count(*)::int FROM audit_events) AS events, (SELECT count(*)::int FROM audit_checkpoints) AS checkpoints')
      ).rows;
      ages.sort((a, b) => a - b);
      return { results, ages, settleSeconds, events, checkpoints, database: database.description };
    } finally {
      await watcher.end();
    }
  } finally {
    for (const process of started.reverse()) await process.stop();
    await database.stop();
  }
}

async function verification({ events, log }) {
  const { Logger } = await import('@nestjs/common');
  Logger.overrideLogger(['error']);
  const { DataSource } = await import('typeorm');
  const database = await benchDatabase(log);
  const { dataSourceOptions, runMigrations } = dist('database/typeorm-options.js');
  const { Sql } = dist('database/sql.js');
  const { PostgresAuditSealRepository } = dist('audit/seal/persistence/postgres-audit-seal.repository.js');
  const { AuditSealer } = dist('audit/seal/domain/audit-sealer.service.js');
  const { AuditVerifier } = dist('audit/seal/domain/audit-verifier.js');
  const { Ed25519CheckpointSigner, Ed25519TrustedKeys } = dist('audit/seal/signing/audit-signing-keys.js');
  const { SystemClock } = dist('common/domain/clock.port.js');
  const dataSource = new DataSource({ ...dataSourceOptions(database.ownerUrl ?? database.url, { poolSize: 6 }), logging: false });
  try {
    await dataSource.initialize();
    await runMigrations(dataSource);
    // A bulk load, as audit-scale makes one: indexes dropped, rows generated, indexes built again.
    const fillStart = performance.now();
    const indexes = await dataSource.query(`SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'audit_events' AND indexname <> 'audit_events_pkey'`);
    for (const { indexname } of indexes) await dataSource.query(`DROP INDEX "${indexname}"`);
    for (let from = 1; from <= events; from += FILL_CHUNK) {
      await dataSource.query(FILL, [from, Math.min(events, from + FILL_CHUNK - 1)]);
      if ((from - 1) % 1_000_000 === 0)
        log(
          `filled ${Math.min(events, from + FILL_CHUNK - 1).toLocaleString('en')} of ${events.toLocaleString('en')} (${fixed((performance.now() - fillStart) / 1000, 0)} s)`,
        );
    }
    for (const { indexdef } of indexes) await dataSource.query(indexdef);
    await dataSource.query('VACUUM ANALYZE audit_events');
    const fillSeconds = (performance.now() - fillStart) / 1000;
    const { privateKey } = generateKeyPairSync('ed25519');
    const store = new PostgresAuditSealRepository(Sql.of(dataSource));
    const sealer = new AuditSealer(store, new Ed25519CheckpointSigner(privateKey), new Ed25519TrustedKeys([createPublicKey(privateKey)]), new SystemClock());
    log('sealing');
    const sealStart = performance.now();
    const sealedEvents = await sealer.sealPending();
    const sealSeconds = (performance.now() - sealStart) / 1000;
    await dataSource.query('VACUUM ANALYZE');
    const [{ size }] = await dataSource.query(
      `SELECT pg_size_pretty(pg_total_relation_size('audit_checkpoints') + pg_total_relation_size('audit_manifests')) AS size`,
    );
    const verifier = new AuditVerifier(store, new Ed25519TrustedKeys([createPublicKey(privateKey)]));
    const runs = [];
    for (let run = 0; run < 2; run++) {
      log(`verifying, run ${run + 1}`);
      const start = performance.now();
      const report = await verifier.verify();
      const seconds = (performance.now() - start) / 1000;
      if (!report.intact)
        throw new Error(`verify found ${report.findings.length} findings in an untouched log: ${JSON.stringify(report.findings.slice(0, 3))}`);
      runs.push({ seconds, events: report.events, checkpoints: report.checkpoints });
    }
    return { events, fillSeconds, sealedEvents, sealSeconds, size, runs, database: database.description };
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    await database.stop();
  }
}

export async function sealing({ connections = 50, duration = 10, rounds = 3, events = 1_000_000 } = {}) {
  const log = (message) => process.stderr.write(`[bench] ${message}\n`);
  const load = await onOff({ connections, duration, rounds, log });
  const verify = await verification({ events, log });
  return { load, verify, connections, duration, rounds };
}

const mean = (values) => values.reduce((a, b) => a + b, 0) / values.length;

export function report({ load, verify, connections, duration, rounds }) {
  const lines = [];
  lines.push(
    `Sealing on and off in one run: ${rounds} rounds, alternating, ${connections} connections for ${duration} s each; each gateway on a database of its own, on ${load.database}. ` +
      `Figures are each round's, then the mean.`,
    '',
  );
  const rows = [];
  for (const call of ['balance', 'bank account']) {
    const on = load.results[`${call}: sealing on`];
    const off = load.results[`${call}: sealing off`];
    const cpu = (runs, who) => mean(runs.map((run) => run.cpuMsPerRequest[who] ?? NaN));
    rows.push([
      call,
      off.map((run) => fixed(run.rps, 0)).join(' / ') + ` (${fixed(mean(off.map((run) => run.rps)), 0)})`,
      on.map((run) => fixed(run.rps, 0)).join(' / ') + ` (${fixed(mean(on.map((run) => run.rps)), 0)})`,
      fixed(mean(on.map((run) => run.rps)) / mean(off.map((run) => run.rps)), 3),
      `${fixed(cpu(off, 'gateway'), 3)} / ${fixed(cpu(on, 'gateway'), 3)}`,
      `${fixed(cpu(off, 'PostgreSQL'), 3)} / ${fixed(cpu(on, 'PostgreSQL'), 3)}`,
      String(on.concat(off).reduce((total, run) => total + run.failures, 0)),
    ]);
  }
  lines.push(
    table(['Call', 'sealing off req/s', 'sealing on req/s', 'on ÷ off', 'gateway CPU ms/req off / on', 'PostgreSQL CPU ms/req off / on', 'errors'], rows),
  );
  lines.push(
    '',
    `While loaded, the oldest unsealed event's age (${load.ages.length} samples, every 250 ms): p50 ${fixed(percentile(load.ages, 50), 2)} s, p99 ${fixed(percentile(load.ages, 99), 2)} s, max ${fixed(load.ages[load.ages.length - 1], 2)} s. ` +
      `After the last round, every event was sealed ${fixed(load.settleSeconds, 2)} s later: ${load.events.toLocaleString('en')} events in ${load.checkpoints.toLocaleString('en')} checkpoints.`,
    '',
  );
  const best = verify.runs.reduce((a, b) => (a.seconds < b.seconds ? a : b));
  lines.push(
    `Verification: ${verify.events.toLocaleString('en')} events made in ${fixed(verify.fillSeconds, 0)} s, sealed by the service's sealer in ${fixed(verify.sealSeconds, 1)} s ` +
      `(${fixed(verify.sealedEvents / verify.sealSeconds, 0)} events/s, catching up in one process), checkpoints and manifests ${verify.size}; Node ${process.version}, on ${verify.database}.`,
    '',
    table(
      ['Verify run', 'seconds', 'events/s', 'checkpoints'],
      verify.runs.map((run, i) => [String(i + 1), fixed(run.seconds, 2), fixed(run.events / run.seconds, 0), String(run.checkpoints)]),
    ),
    '',
    `At the best run's rate, 10,000,000 events verify in ${fixed(10_000_000 / (best.events / best.seconds), 0)} s.`,
  );
  return lines.join('\n');
}
