// Printed by .ci/run when a step outlives its limit: what PostgreSQL's sessions were doing (and
// which waited for a lock), on every server the step could have used.
const { Client } = require('pg');

async function report(url) {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 3000, query_timeout: 5000 });
  try {
    await client.connect();
    const { rows } = await client.query(
      `SELECT pid, datname, application_name, state, wait_event_type, wait_event,
              round(extract(epoch FROM now() - query_start)) AS seconds, left(regexp_replace(query, '\\s+', ' ', 'g'), 140) AS query
         FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() ORDER BY query_start`,
    );
    console.log(`-- sessions on ${new URL(url).host}: ${rows.length}`);
    for (const row of rows) console.log(JSON.stringify(row));
    const waiting = await client.query(`SELECT pid, locktype, mode, relation::regclass AS relation FROM pg_locks WHERE NOT granted`);
    for (const row of waiting.rows) console.log('waits for a lock:', JSON.stringify(row));
  } catch (error) {
    console.log(`-- ${new URL(url).host}: ${error.message}`);
  } finally {
    await client.end().catch(() => undefined);
  }
}

(async () => {
  for (const url of process.argv.slice(2)) await report(url);
})();
