import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { PrometheusMetrics } from '../../src/metrics/prometheus.metrics';

/**
 * The alert rules (deploy/prometheus) and the dashboard (deploy/grafana) held to the metrics the
 * service exports: a metric renamed in the code, or a label dropped, fails here and not on the day
 * the alert should have fired. promtool (Debian's prometheus package, installed by .ci/run) checks
 * the rules and runs their unit tests.
 */
const DEPLOY = join(process.cwd(), 'deploy');
const RULES_FILE = join(DEPLOY, 'prometheus', 'alerts.yml');
const RULES_TEST_FILE = join(DEPLOY, 'prometheus', 'alerts.test.yml');

interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels: { severity: string };
  annotations: { summary: string; description: string };
}

interface Panel {
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  targets?: { expr: string; datasource?: { uid: string } }[];
}

const rules = (parse(readFileSync(RULES_FILE, 'utf8')) as { groups: { rules: AlertRule[] }[] }).groups.flatMap((group) => group.rules);
const dashboard = JSON.parse(readFileSync(join(DEPLOY, 'grafana', 'partner-gateway.json'), 'utf8')) as {
  uid: string;
  panels: Panel[];
  templating: { list: { name: string; type: string }[] };
};
const dashboardExprs = dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr));

const PROMQL_WORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'inf', 'nan']);
/** Series Prometheus makes itself for every target. */
const PROMETHEUS_OWN = new Set(['up']);

/** Each series selector of a PromQL expression: the metric's name and the label names it matches on. */
function selectorsOf(expr: string): { metric: string; labels: string[] }[] {
  const text = expr
    .replace(/\$\{?[A-Za-z_]+\}?/g, '1m') // Grafana's variables ($__rate_interval, $job) in a range or a matcher
    .replace(/\[[^\]]*\]/g, ''); // ranges
  const selectors: { metric: string; labels: string[] }[] = [];
  // A name, not a function (followed by "("), then an optional {matchers}.
  const pattern = /([A-Za-z_:][A-Za-z0-9_:]*)\s*(\{[^}]*\})?(\s*\()?/g;
  const stripped = text.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  // Grouping clauses name labels, not metrics.
  const withoutGroupings = stripped.replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  for (const match of withoutGroupings.matchAll(pattern)) {
    const [, name, matchers, call] = match;
    if (call || PROMQL_WORDS.has(name.toLowerCase()) || /^\d/.test(name)) continue;
    // A name inside {...} is a label, already taken by the selector it belongs to.
    const before = withoutGroupings.slice(0, match.index);
    if (before.lastIndexOf('{') > before.lastIndexOf('}')) continue;
    const labels = matchers ? [...matchers.matchAll(/([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)/g)].map((m) => m[1]) : [];
    selectors.push({ metric: name, labels });
  }
  return selectors;
}

/** What the service exports: each series name (histograms as _bucket, _count, _sum) and its label names. */
async function exported(): Promise<Map<string, Set<string>>> {
  const metrics = new PrometheusMetrics();
  // One observation through every port method, so that every labelled series exists.
  metrics.requestServed('GET', '/api/v1/customers', 200, 0.01);
  metrics.upstreamCall('customer.create', 'success', 0.01);
  metrics.auditWriteFailed();
  metrics.idempotentReplay('customer.create');
  metrics.auditSealer({ state: 'running', newestCheckpoint: null, oldestUnsealedAt: null, maxLagSeconds: 300, checkedAt: null });
  metrics.errorAnswered('RATE_LIMIT.EXCEEDED');
  metrics.unresolvedCalls(0);
  metrics.readiness(true);
  const names = new Map<string, Set<string>>();
  for (const family of await metrics.registry.getMetricsAsJSON()) {
    const labels = new Set(family.values.flatMap((value) => Object.keys(value.labels)));
    const series = String(family.type) === 'histogram' ? ['_bucket', '_count', '_sum'].map((suffix) => family.name + suffix) : [family.name];
    for (const name of series) names.set(name, name.endsWith('_bucket') ? new Set([...labels, 'le']) : new Set([...labels].filter((l) => l !== 'le')));
  }
  return names;
}

/** Labels Prometheus adds to every scraped series. */
const TARGET_LABELS = ['job', 'instance'];

describe('alert rules and dashboard against the exported metrics', () => {
  let metrics: Map<string, Set<string>>;
  beforeAll(async () => {
    metrics = await exported();
  });

  it('when the selectors are read, then the reader finds names and labels (and not functions or grouping labels)', () => {
    expect(selectorsOf('sum by (job) (rate(a_total{code=~"UPSTREAM\\\\..+", job="x"}[5m])) / on (job) b unless c{state="off"} == 1')).toEqual([
      { metric: 'a_total', labels: ['code', 'job'] },
      { metric: 'b', labels: [] },
      { metric: 'c', labels: ['state'] },
    ]);
  });

  it('when every rule and panel is read, then each metric it names is exported, with the labels it matches on', () => {
    const problems: string[] = [];
    for (const [where, expr] of [...rules.map((rule) => [`rule ${rule.alert}`, rule.expr]), ...dashboardExprs.map((expr) => ['dashboard', expr])]) {
      for (const { metric, labels } of selectorsOf(expr)) {
        if (PROMETHEUS_OWN.has(metric)) continue;
        const known = metrics.get(metric);
        if (!known) {
          problems.push(`${where}: ${metric} is not exported`);
          continue;
        }
        for (const label of labels) if (!known.has(label) && !TARGET_LABELS.includes(label)) problems.push(`${where}: ${metric} has no label ${label}`);
      }
    }
    expect(problems).toEqual([]);
    // The reader must have found something: an empty reading would pass anything.
    expect(rules.flatMap((rule) => selectorsOf(rule.expr)).length).toBeGreaterThan(rules.length);
  });

  it('when the rules are listed, then each has a severity, a summary and a description, and a promtool unit test', () => {
    const tested = readFileSync(RULES_TEST_FILE, 'utf8');
    for (const rule of rules) {
      expect(['page', 'ticket']).toContain(rule.labels.severity);
      expect(rule.annotations.summary).toMatch(/\S/);
      expect(rule.annotations.description).toMatch(/\S/);
      expect(tested).toContain(`alertname: ${rule.alert}\n`);
    }
  });

  it('when promtool checks the rules and runs their unit tests, then both pass', () => {
    expect(execFileSync('promtool', ['check', 'rules', RULES_FILE], { encoding: 'utf8' })).toMatch(/SUCCESS: \d+ rules found/);
    expect(execFileSync('promtool', ['test', 'rules', RULES_TEST_FILE], { encoding: 'utf8', cwd: join(DEPLOY, 'prometheus') })).toMatch(/SUCCESS/);
  });

  it('when the dashboard is read, then it shows requests, errors by code, latency, the provider, the circuit, rate-limit refusals, audit writes and sealing lag', () => {
    const all = dashboardExprs.join('\n');
    for (const needed of [
      'http_request_duration_seconds_count',
      'http_request_duration_seconds_bucket',
      'api_errors_total',
      'upstream_request_duration_seconds_bucket',
      'upstream_request_duration_seconds_count',
      'upstream_circuit_state',
      'code="RATE_LIMIT.EXCEEDED"',
      'audit_write_failures_total',
      'audit_seal_oldest_unsealed_age_seconds',
    ]) {
      expect(all).toContain(needed);
    }
  });

  it('when provisioned, then it has a fixed uid and every panel reads the data source the operator picks', () => {
    expect(dashboard.uid).toBe('partner-gateway');
    expect(dashboard.templating.list.find((variable) => variable.name === 'datasource')?.type).toBe('datasource');
    for (const panel of dashboard.panels.filter((p) => p.type !== 'row')) {
      expect(panel.datasource?.uid).toBe('${datasource}');
      for (const target of panel.targets ?? []) expect(target.datasource?.uid).toBe('${datasource}');
    }
  });
});
