import { randomBytes } from 'node:crypto';
import { spawn, ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cutAuditChain } from '../support/audit';
import { freePort } from '../support/processes';
import { callApi, createCustomer } from '../support/http';
import { startReplicas, ReplicaSet } from '../support/replicas';
import { injectFault } from '../support/sandbox';
import { waitFor } from '../support/wait-for';

/**
 * A real Prometheus (Debian's package, installed by .ci/run) scrapes a running gateway with the
 * alert rules of deploy/prometheus/alerts.yml, and the test causes what two of them are for: the
 * provider circuit opening and the audit sealer stopping. The rules are the file's, word for word,
 * but for their `for:` durations, shortened to 1 s so that the test takes seconds (the durations
 * themselves are promtool's unit tests: alerts.test.yml).
 */
const RULES = join(process.cwd(), 'deploy', 'prometheus', 'alerts.yml');

interface RuleState {
  name: string;
  state: 'inactive' | 'pending' | 'firing';
  /** When Prometheus last evaluated the rule (RFC 3339). */
  lastEvaluation: string;
}

describe('alert rules in a real Prometheus scraping the gateway', () => {
  let set: ReplicaSet;
  let prometheus: ChildProcess;
  let prometheusUrl: string;
  /** When the gateway's series were first seen in Prometheus. */
  let scrapedAt = 0;
  let dir: string;
  let partner: string;
  let customerId: string;
  const output: string[] = [];

  const rules = async (): Promise<RuleState[]> => {
    const response = await fetch(`${prometheusUrl}/api/v1/rules?type=alert`);
    const body = (await response.json()) as { data: { groups: { rules: RuleState[] }[] } };
    return body.data.groups.flatMap((group) => group.rules);
  };
  const ruleStates = async (): Promise<Map<string, RuleState['state']>> => new Map((await rules()).map((rule) => [rule.name, rule.state]));
  const stateOf = async (alert: string) => (await ruleStates()).get(alert);
  const query = async (expr: string): Promise<number | undefined> => {
    const response = await fetch(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
    const body = (await response.json()) as { data: { result: { value: [number, string] }[] } };
    return body.data.result.length === 0 ? undefined : Number(body.data.result[0].value[1]);
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pgw-prometheus-'));
    // As an operator scrapes a live gateway: with the metrics token, from a file both read.
    const tokenFile = join(dir, 'metrics-token');
    writeFileSync(tokenFile, `${randomBytes(32).toString('base64url')}\n`);
    set = await startReplicas(1, {
      UPSTREAM_BREAKER_THRESHOLD: '2',
      UPSTREAM_BREAKER_HALF_OPEN_MS: '600000',
      UPSTREAM_RETRY_MAX: '0',
      AUDIT_SEAL_MAX_LAG_SECONDS: '5',
      METRICS_TOKEN: tokenFile,
    });
    partner = await set.createClient('partner');
    customerId = await createCustomer(set.replicas[0].base, partner);

    writeFileSync(join(dir, 'alerts.yml'), readFileSync(RULES, 'utf8').replace(/^(\s+for:\s*)\S+$/gm, '$11s'));
    writeFileSync(
      join(dir, 'prometheus.yml'),
      [
        'global: { scrape_interval: 1s, evaluation_interval: 1s }',
        'rule_files: [alerts.yml]',
        'scrape_configs:',
        '  - job_name: partner-gateway',
        `    authorization: { type: Bearer, credentials_file: "${tokenFile}" }`,
        `    static_configs: [{ targets: ["${new URL(set.replicas[0].base).host}"] }]`,
        '',
      ].join('\n'),
    );
    // Prometheus cannot listen on port 0 and say where: a free port is picked, and picked again
    // should another process take it before Prometheus binds it.
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      prometheusUrl = `http://127.0.0.1:${port}`;
      const started = spawn(
        'prometheus',
        [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, `data-${attempt}`)}`, `--web.listen-address=127.0.0.1:${port}`],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      prometheus = started;
      // Not installed: .ci/run installs Debian's prometheus package (apt-get install prometheus).
      started.on('error', (error) => output.push(`prometheus could not start: ${error.message}`));
      started.stdout.on('data', (chunk: Buffer) => output.push(chunk.toString()));
      started.stderr.on('data', (chunk: Buffer) => output.push(chunk.toString()));
      const listening = await waitFor(
        async () => (started.exitCode !== null ? 'exited' : (await fetch(`${prometheusUrl}/-/ready`).catch(() => undefined))?.ok ? 'ready' : undefined),
        { timeoutMs: 30_000, intervalMs: 100, what: 'Prometheus to start' },
      ).catch(() => 'exited');
      if (listening === 'ready') break;
      started.kill('SIGKILL');
      if (attempt === 3 || !/address already in use/.test(output.join(''))) {
        throw new Error(`Prometheus did not start: ${output.join('').slice(-2000)}`);
      }
    }
    try {
      await waitFor(
        async () => (await query('up{job="partner-gateway"}').catch(() => undefined)) === 1 && (await query('audit_sealer_state{state="running"}')) === 1,
        {
          timeoutMs: 30_000,
          intervalMs: 250,
          what: 'Prometheus scraping the gateway',
        },
      );
      scrapedAt = Date.now();
    } catch (error) {
      throw new Error(`${(error as Error).message}; Prometheus said: ${output.join('').slice(-2000)}`, { cause: error });
    }
  }, 120_000);

  afterAll(async () => {
    prometheus?.kill('SIGKILL');
    await set?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('when the gateway is healthy, then every rule is loaded and neither the circuit nor the sealer alert is active', async () => {
    // Evaluated three times (1 s apart) since the gateway's series were first scraped: long enough for
    // any rule whose condition held to be pending or firing (their `for:` is 1 s here).
    await waitFor(async () => (await rules()).every((rule) => Date.parse(rule.lastEvaluation) >= scrapedAt + 3000), {
      timeoutMs: 30_000,
      intervalMs: 250,
      what: 'three evaluations of every rule since the first scrape',
    });
    const states = await ruleStates();
    expect([...states.keys()].sort()).toEqual(
      [
        'GatewayAuditSealerLagging',
        'GatewayAuditSealerStopped',
        'GatewayAuditStoreUnavailable',
        'GatewayBreakGlassUsed',
        'GatewayClientErrors',
        'GatewayDown',
        'GatewayLatencyP99High',
        'GatewayNotReady',
        'GatewayOutcomesHeld',
        'GatewayProviderCircuitOpen',
        'GatewayProviderErrors',
        'GatewayServerErrors',
        'GatewayUnresolvedCalls',
      ].sort(),
    );
    expect(states.get('GatewayProviderCircuitOpen')).toBe('inactive');
    expect(states.get('GatewayAuditSealerStopped')).toBe('inactive');
    expect(states.get('GatewayAuditSealerLagging')).toBe('inactive');
    expect(states.get('GatewayDown')).toBe('inactive');
    expect(states.get('GatewayBreakGlassUsed')).toBe('inactive');
    // No readiness check yet (nothing probes it here): no verdict, no alert.
    expect(states.get('GatewayNotReady')).toBe('inactive');
  });

  it('when an admin client token (break-glass) is used, then GatewayBreakGlassUsed fires', async () => {
    const admin = await set.createClient('admin');
    const answer = await fetch(`${set.replicas[0].base}/api/v1/clients`, { headers: { authorization: `Bearer ${admin}` } });
    expect(answer.status).toBe(200);
    await waitFor(async () => (await stateOf('GatewayBreakGlassUsed')) === 'firing', {
      timeoutMs: 20_000,
      intervalMs: 250,
      what: 'the break-glass alert firing',
    });
  });

  it('when the provider keeps failing until the circuit opens, then GatewayProviderCircuitOpen fires', async () => {
    await injectFault(set.sandbox, { method: 'GET', status: 500, count: 3 });
    for (let i = 0; i < 3; i++) await callApi(set.replicas[0].base, 'GET', `/api/v1/customers/${customerId}/balance`, { token: partner });

    await waitFor(async () => (await stateOf('GatewayProviderCircuitOpen')) === 'firing', {
      timeoutMs: 20_000,
      intervalMs: 250,
      what: 'the circuit alert firing',
    });
  });

  it('when the audit chain is cut under the sealer, then GatewayAuditSealerStopped and GatewayAuditSealerLagging fire', async () => {
    await waitFor(async () => ((await query('audit_seal_newest_checkpoint_seq')) ?? 0) > 0, { timeoutMs: 10_000, what: 'a first checkpoint' });
    await cutAuditChain(set.database.ownerUrl);

    await waitFor(async () => (await stateOf('GatewayAuditSealerStopped')) === 'firing', {
      timeoutMs: 20_000,
      intervalMs: 250,
      what: 'the sealer alert firing',
    });
    await waitFor(async () => (await stateOf('GatewayAuditSealerLagging')) === 'firing', { timeoutMs: 20_000, intervalMs: 250, what: 'the lag alert firing' });
  });
});
