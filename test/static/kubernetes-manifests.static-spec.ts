import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, posix } from 'node:path';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { knownVariables, validateEnvironment } from '../../src/config/load-config';
import { shutdownTimes } from '../../src/config/provider-call';
import { readTrustedProxies } from '../../src/config/trusted-proxies';
import { generateSandboxKeys } from '../../dev/sandbox/sandbox-keys';
import { Container, K8sObject, PodSpec, podOf, renderedManifests } from '../support/kubernetes';

/**
 * The Kubernetes manifests (deploy/kubernetes), rendered by kubectl kustomize and validated against
 * the Kubernetes schemas by scripts/validate-manifests.mjs, held to the code: the probes' paths,
 * the ports, every variable, the secrets, the grace period, the migrations and the security context;
 * and, as rendered, the selectors, the replica count the autoscaler owns, the memory measured in
 * docs/benchmarks.md, the key files, the Prometheus scrape job's token and the image's digest form.
 */
const rendered = renderedManifests();
const openapi = JSON.parse(readFileSync(join(process.cwd(), 'openapi.json'), 'utf8')) as { paths: Record<string, unknown> };
const dockerfile = readFileSync(join(process.cwd(), 'Dockerfile'), 'utf8');

const renderings = Object.keys(rendered).filter((name) => name !== 'secrets.example.yaml');
const secrets = rendered['secrets.example.yaml'];
const secretKeys = (name: string) => Object.keys(secrets.find((secret) => secret.metadata.name === name)?.stringData ?? {});

function one(objects: K8sObject[], kind: string): K8sObject {
  const found = objects.filter((object) => object.kind === kind);
  expect(found).toHaveLength(1);
  return found[0];
}
const gatewayOf = (objects: K8sObject[]) => podOf(objects).containers.find((container) => container.name === 'gateway')!;

/**
 * The variables that hold key material and take a file's path instead (src/config/environment/ and
 * its readers): in a pod, files of a read-only secret volume, never the Secret's values in the
 * environment. SESSION_PREVIOUS_KEYS is a comma-separated list of them.
 */
const KEY_FILE_VARIABLES = [
  'UPSTREAM_PUBLIC_KEY',
  'AUDIT_SIGNING_KEY',
  'AUDIT_PUBLIC_KEYS',
  'END_USER_PSEUDONYM_KEY',
  'SESSION_KEY',
  'SESSION_PREVIOUS_KEYS',
  'DATA_KEY',
  'DATA_PREVIOUS_KEYS',
  'OIDC_CLIENT_PRIVATE_KEY',
  'METRICS_TOKEN',
];
/** The paths a variable's value names: one, or a comma-separated list's. */
const pathsIn = (variable: string, value: string) =>
  variable === 'SESSION_PREVIOUS_KEYS' || variable === 'DATA_PREVIOUS_KEYS' ? value.split(',').map((item) => item.trim()) : [value];

/** Test values that the configuration's validation accepts, for the secrets' keys: variables' and files'. */
function secretValues(): Record<string, string> {
  const { privateKey } = generateKeyPairSync('ed25519');
  return {
    DATABASE_URL: 'postgres://gateway:x@postgres.example.internal:5432/gateway',
    RATE_LIMIT_REDIS_URL: 'rediss://:x@redis.example.internal:6379',
    UPSTREAM_BEARER_TOKEN: 'a-provider-token',
    'upstream-public-key.pem': `${generateSandboxKeys().publicKeyPem}\n`,
    'audit-signing-key.pem': privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    // As `openssl rand -base64 32 > file` writes them: with a newline.
    'end-user-pseudonym.key': `${randomBytes(32).toString('base64')}\n`,
    'session.key': `${randomBytes(32).toString('base64')}\n`,
    'data.key': `${randomBytes(32).toString('base64')}\n`,
    'metrics-token': `${randomBytes(32).toString('base64')}\n`,
  };
}

/** The parts of a pod that mount the Secret's files (test/support/kubernetes.ts reads the rest). */
interface SecretVolume {
  name: string;
  secret?: { secretName: string; defaultMode?: number; items?: { key: string; path: string; mode?: number }[] };
}
interface Mounts {
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } } }[];
}
const volumesOf = (pod: PodSpec) => (pod as PodSpec & { volumes?: SecretVolume[] }).volumes ?? [];
const mountsOf = (container: Container) => container as Container & Mounts;

/** The file a path names: the secret volume mounted above it, and the item that puts the Secret's key there. */
function secretFileAt(pod: PodSpec, container: Container, path: string): { secretName: string; key: string; readOnly: boolean } | undefined {
  for (const mount of mountsOf(container).volumeMounts ?? []) {
    const volume = volumesOf(pod).find((v) => v.name === mount.name);
    if (!volume?.secret || !path.startsWith(`${mount.mountPath}/`)) continue;
    const relative = path.slice(mount.mountPath.length + 1);
    const item = volume.secret.items ? volume.secret.items.find((i) => i.path === relative) : { key: relative, path: relative };
    if (item) return { secretName: volume.secret.secretName, key: item.key, readOnly: mount.readOnly === true };
  }
  return undefined;
}

/**
 * A container's environment as the kubelet makes it, with test values for the Secrets: the ConfigMap
 * (when it has it), its variables, and the Secret's files written under a scratch directory that
 * stands for the mount (the ConfigMap's paths moved there).
 */
function environmentOf(pod: PodSpec, container: Container, config: Record<string, string>, dir: string): Record<string, string> {
  const values: Record<string, string> = {
    ...secretValues(),
    MIGRATIONS_DATABASE_URL: 'postgres://gateway_owner:x@postgres.example.internal:5432/gateway',
  };
  const env: Record<string, string> = {};
  const fromConfigMap = container.envFrom?.some((source) => source.configMapRef) ? config : {};
  for (const [name, value] of Object.entries(fromConfigMap)) {
    env[name] = pathsIn(name, value)
      .map((path) => {
        const file = path.startsWith('/') ? secretFileAt(pod, container, path) : undefined;
        if (!file) return path;
        const copy = join(dir, file.secretName, file.key);
        mkdirSync(dirname(copy), { recursive: true });
        writeFileSync(copy, values[file.key] ?? '');
        return copy;
      })
      .join(',');
  }
  for (const variable of mountsOf(container).env ?? []) {
    const ref = variable.valueFrom?.secretKeyRef;
    if (variable.value !== undefined) env[variable.name] = variable.value;
    else if (ref && values[ref.key] !== undefined) env[variable.name] = values[ref.key];
  }
  return env;
}

/** What the tests read of a container beyond test/support/kubernetes.ts's Container. */
interface Resources {
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
}
const resourcesOf = (container: Container) => (container as Container & Resources).resources;

/** A Kubernetes memory quantity in MiB. */
function mebibytes(quantity: string): number {
  const match = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|k|M|G)?$/.exec(quantity);
  if (!match) throw new Error(`not a memory quantity: ${quantity}`);
  const factor = { Ki: 1 / 1024, Mi: 1, Gi: 1024, k: 1000 / 2 ** 20, M: 1e6 / 2 ** 20, G: 1e9 / 2 ** 20 }[match[2] ?? ''] ?? 1 / 2 ** 20;
  return Number(match[1]) * factor;
}

/** The rows of docs/benchmarks.md's section on the pods' memory, by their first cell. */
function memoryTables(): Map<string, string[]> {
  const text = readFileSync(join(process.cwd(), 'docs', 'benchmarks.md'), 'utf8');
  const start = text.indexOf("\n## Memory, and the pods' requests and limits\n");
  expect(start).toBeGreaterThan(0);
  const section = text.slice(start + 1).split(/\n## /)[0];
  const rows = new Map<string, string[]>();
  for (const line of section.split('\n').filter((l) => /^\|.*\|$/.test(l) && !/^\|\s*-/.test(l))) {
    const [label, ...cells] = line
      .slice(1, -1)
      .split('|')
      .map((cell) => cell.trim());
    rows.set(label, cells);
  }
  return rows;
}
const numbersIn = (text: string) => [...text.matchAll(/\d+(?:\.\d+)?/g)].map((m) => Number(m[0]));

describe.each(renderings)('deploy/kubernetes/%s', (name) => {
  const objects = rendered[name];
  const pod = podOf(objects);
  const gateway = gatewayOf(objects);
  const config = one(objects, 'ConfigMap').data!;

  it('when rendered, then it has the Deployment, Service, PodDisruptionBudget, HorizontalPodAutoscaler, NetworkPolicy, ConfigMap and ServiceAccount, all valid', () => {
    for (const kind of ['Deployment', 'Service', 'PodDisruptionBudget', 'HorizontalPodAutoscaler', 'NetworkPolicy', 'ConfigMap', 'ServiceAccount'])
      one(objects, kind);
  });

  it('when the probes are read, then liveness and startup ask /health/live and readiness /health/ready, routes the service has, on its port', () => {
    expect(gateway.livenessProbe?.httpGet.path).toBe('/health/live');
    expect(gateway.startupProbe?.httpGet.path).toBe('/health/live');
    expect(gateway.readinessProbe?.httpGet.path).toBe('/health/ready');
    for (const path of ['/health/live', '/health/ready']) expect(Object.keys(openapi.paths)).toContain(path);
    const port = gateway.ports!.find((p) => p.name === 'http')!;
    expect(port.containerPort).toBe(Number(config.PORT));
    expect(config.HOST).toBe('0.0.0.0');
    for (const probe of [gateway.livenessProbe, gateway.readinessProbe, gateway.startupProbe]) expect(probe?.httpGet.port).toBe('http');
    expect((one(objects, 'Service').spec as { ports: { targetPort: string }[] }).ports[0].targetPort).toBe('http');
  });

  it('when the variables are read, then each is one the service knows, and with the Secret’s variables and files they make a valid production configuration', () => {
    const known = new Set(knownVariables());
    const named = [...Object.keys(config), ...[...pod.initContainers, ...pod.containers].flatMap((c) => (mountsOf(c).env ?? []).map((e) => e.name))];
    for (const variable of named) expect([variable, variable.startsWith('OTEL_') || known.has(variable)]).toEqual([variable, true]);

    const dir = mkdtempSync(join(tmpdir(), 'pgw-k8s-secrets-'));
    try {
      const env = environmentOf(pod, gateway, config, dir);
      const valid = validateEnvironment(env);
      expect(valid.NODE_ENV).toBe('production');
      expect(valid.UPSTREAM_BASE_URL).toBe(config.UPSTREAM_BASE_URL);
      expect(valid.MIGRATIONS_RUN).toBe(false);
      // The keys are read from the files, where the pod has them.
      for (const variable of ['UPSTREAM_PUBLIC_KEY', 'AUDIT_SIGNING_KEY', 'END_USER_PSEUDONYM_KEY', 'SESSION_KEY', 'DATA_KEY'])
        expect(valid[variable as keyof typeof valid]).toBe(join(dir, 'partner-gateway', basename(config[variable])));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // The example Secret names every key the test had to supply, and no other.
    expect(secretKeys('partner-gateway').sort()).toEqual(Object.keys(secretValues()).sort());
  });

  it('finding 2: when TRUST_PROXY is read, then it names the ingress’s addresses, never true (every hop, which lets a caller choose its own address)', () => {
    expect(config.TRUST_PROXY).toBeDefined();
    expect(['true', 'yes', 'on']).not.toContain(config.TRUST_PROXY.trim().toLowerCase());
    expect(readTrustedProxies(config.TRUST_PROXY, config).kind).toBe('addresses');
  });

  it('finding 5: when web apps are turned on (OIDC_CLIENT_ID), then the example Secret already holds the session key every pod shares, and production accepts it', () => {
    expect(config.SESSION_KEY).toBeDefined();
    expect(secretKeys('partner-gateway')).toContain(secretFileAt(pod, gateway, config.SESSION_KEY)?.key);

    const dir = mkdtempSync(join(tmpdir(), 'pgw-k8s-secrets-'));
    try {
      const env = environmentOf(pod, gateway, { ...config, OIDC_CLIENT_ID: 'partner-web' }, dir);
      const valid = validateEnvironment({ ...env, OIDC_CLIENT_SECRET: 'a-client-secret' });
      expect(valid.SESSION_KEY).toBe(join(dir, 'partner-gateway', 'session.key'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('when the pod is stopped, then Kubernetes waits for preStop and the whole of the service’s own shutdown before it kills it', () => {
    const preStop = gateway.lifecycle?.preStop?.exec?.command;
    expect(preStop?.[0]).toBe('sleep');
    const preStopMs = Number(preStop?.[1]) * 1000;
    const times = shutdownTimes({
      SHUTDOWN_GRACE_MS: Number(config.SHUTDOWN_GRACE_MS),
      UPSTREAM_TIMEOUT_MS: Number(config.UPSTREAM_TIMEOUT_MS),
      UPSTREAM_RETRY_MAX: Number(config.UPSTREAM_RETRY_MAX),
    });
    expect(preStopMs).toBeGreaterThan(0);
    expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThanOrEqual(preStopMs + times.deadlineMs);
  });

  it('when the migrations run, then the init container runs them as the owner, and only it holds the owner’s credentials', () => {
    const [migrate] = pod.initContainers;
    expect(migrate.command).toEqual(['node', 'dist/src/database/cli/migrate.cli.js', 'run']);
    expect(existsSync(join(process.cwd(), 'src', 'database', 'cli', 'migrate.cli.ts'))).toBe(true);
    expect(migrate.image).toBe(gateway.image);
    expect(migrate.env?.find((e) => e.name === 'MIGRATIONS_DATABASE_URL')?.valueFrom?.secretKeyRef).toEqual({
      name: 'partner-gateway-migrations',
      key: 'MIGRATIONS_DATABASE_URL',
    });
    expect(migrate.env?.find((e) => e.name === 'DATABASE_URL')?.valueFrom?.secretKeyRef).toEqual({ name: 'partner-gateway', key: 'DATABASE_URL' });
    const gatewaySecrets = (mountsOf(gateway).env ?? []).flatMap((e) => (e.valueFrom?.secretKeyRef ? [e.valueFrom.secretKeyRef.name] : []));
    expect(new Set(gatewaySecrets)).toEqual(new Set(['partner-gateway']));
    expect(secretKeys('partner-gateway')).not.toContain('MIGRATIONS_DATABASE_URL');
    expect(config.MIGRATIONS_RUN).toBe('false');
    // What it has is a configuration production starts with (the migrations too refuse to run
    // without the service's provider and keys), and the service's own: the same ConfigMap, so the
    // audit log's retention the migrations set is the one the service keeps.
    expect(migrate.envFrom?.map((source) => source.configMapRef?.name)).toEqual(gateway.envFrom?.map((source) => source.configMapRef?.name));
    const dir = mkdtempSync(join(tmpdir(), 'pgw-k8s-secrets-'));
    try {
      const valid = validateEnvironment(environmentOf(pod, migrate, config, dir));
      expect(valid.NODE_ENV).toBe('production');
      expect(valid.MIGRATIONS_DATABASE_URL).toBeDefined();
      expect(valid.AUDIT_RETENTION_DAYS).toBe(validateEnvironment(environmentOf(pod, gateway, config, dir)).AUDIT_RETENTION_DAYS);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('when the pod runs, then every container is non-root with a read-only root filesystem, no privilege escalation and no capabilities', () => {
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    // The image's user (Dockerfile: USER node, uid 1000 in the Node images).
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(pod.securityContext.runAsUser).toBe(1000);
    for (const container of [...pod.initContainers, ...pod.containers]) {
      expect(container.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    }
    expect(config.DATA_DIR).toBe('/data');
  });

  it('when scaled and disrupted, then the autoscaler and the budget name this Deployment and its pods', () => {
    const deployment = one(objects, 'Deployment');
    const hpa = one(objects, 'HorizontalPodAutoscaler').spec as { scaleTargetRef: { kind: string; name: string }; minReplicas: number };
    expect(hpa.scaleTargetRef).toMatchObject({ kind: 'Deployment', name: deployment.metadata.name });
    const podLabels = (deployment.spec as { template: { metadata: { labels: Record<string, string> } } }).template.metadata.labels;
    const pdb = one(objects, 'PodDisruptionBudget').spec as { selector: { matchLabels: Record<string, string> }; maxUnavailable: number };
    expect(podLabels).toMatchObject(pdb.selector.matchLabels);
    expect(hpa.minReplicas).toBeGreaterThan(pdb.maxUnavailable);
  });

  it('when traffic leaves the pod, then only DNS, PostgreSQL, Redis, HTTPS (the provider, the OpenID provider) and OTLP may', () => {
    const policy = one(objects, 'NetworkPolicy').spec as { policyTypes: string[]; egress: { ports: { port: number }[] }[] };
    expect(policy.policyTypes).toEqual(['Ingress', 'Egress']);
    expect([...new Set(policy.egress.flatMap((rule) => rule.ports.map((p) => p.port)))].sort((a, b) => a - b)).toEqual([53, 443, 4318, 5432, 6379]);
  });

  it('when rendered, then the DNS peer asks for CoreDNS’s pods by their own label only, no peer carries the gateway’s labels, and every selector of the gateway’s selects its pods', () => {
    type Labels = { matchLabels: Record<string, string> };
    type Peer = { namespaceSelector?: Labels; podSelector?: Labels; ipBlock?: { cidr: string } };
    const policy = one(objects, 'NetworkPolicy').spec as {
      podSelector: Labels;
      ingress: { from: Peer[]; ports: { port: string | number }[] }[];
      egress: { to: Peer[]; ports: { port: number; protocol: string }[] }[];
    };
    const dns = policy.egress.filter((rule) => rule.ports.some((p) => p.port === 53));
    expect(dns).toEqual([
      {
        to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } }, podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }],
        ports: [
          { port: 53, protocol: 'UDP' },
          { port: 53, protocol: 'TCP' },
        ],
      },
    ]);
    // In: the ingress controller's and Prometheus's namespaces, any pod there.
    expect(policy.ingress.flatMap((rule) => rule.from)).toEqual([
      { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } },
      { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } },
    ]);
    // No peer is selected by a label kustomization.yaml puts on the gateway's objects.
    const ownLabels = one(objects, 'Deployment').metadata.labels ?? {};
    expect(Object.keys(ownLabels).length).toBeGreaterThan(0);
    for (const peer of [...policy.ingress.flatMap((rule) => rule.from), ...policy.egress.flatMap((rule) => rule.to)])
      for (const selector of [peer.namespaceSelector, peer.podSelector])
        for (const label of Object.keys(ownLabels)) expect(selector?.matchLabels ?? {}).not.toHaveProperty([label]);

    // The gateway's own selectors: the Deployment's (what clusters have had since the first apply,
    // and which cannot change), its pods', the Service's, the budget's, the spread's, the policy's.
    const deployment = one(objects, 'Deployment').spec as {
      selector: Labels;
      template: { metadata: { labels: Record<string, string> }; spec: { topologySpreadConstraints: { labelSelector: Labels }[] } };
    };
    const selector = deployment.selector.matchLabels;
    expect(selector).toEqual({ 'app.kubernetes.io/name': 'partner-gateway', 'app.kubernetes.io/part-of': 'partner-gateway' });
    expect(deployment.template.metadata.labels).toMatchObject(selector);
    expect((one(objects, 'Service').spec as { selector: Record<string, string> }).selector).toEqual(selector);
    expect((one(objects, 'PodDisruptionBudget').spec as { selector: Labels }).selector.matchLabels).toEqual(selector);
    expect(policy.podSelector.matchLabels).toEqual(selector);
    for (const spread of deployment.template.spec.topologySpreadConstraints) expect(spread.labelSelector.matchLabels).toEqual(selector);
    const hpa = one(objects, 'HorizontalPodAutoscaler').spec as { scaleTargetRef: { apiVersion: string; kind: string; name: string } };
    expect(hpa.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: one(objects, 'Deployment').metadata.name });
  });

  it('when an autoscaler targets the Deployment, then the Deployment names no replica count (an apply would reset the autoscaler’s)', () => {
    const hpas = objects.filter((object) => object.kind === 'HorizontalPodAutoscaler');
    expect(hpas.length).toBeGreaterThan(0);
    for (const hpa of hpas) {
      const target = (hpa.spec as { scaleTargetRef: { kind: string; name: string } }).scaleTargetRef;
      const scaled = objects.find((object) => object.kind === target.kind && object.metadata.name === target.name);
      expect(scaled).toBeDefined();
      expect(scaled!.spec).not.toHaveProperty('replicas');
    }
  });

  it('when the memory is read, then the request covers the highest peak measured at saturation and the limit that peak with tracing on, with the headroom docs/benchmarks.md states', () => {
    const rows = memoryTables();
    const measured = [...rows].filter(([label]) => /^peak at saturation/.test(label));
    expect(measured.length).toBeGreaterThanOrEqual(2);
    const highest = Math.max(...measured.flatMap(([, [mib]]) => numbersIn(mib)));
    // The table's own "highest" is the highest of its rows.
    expect(numbersIn(rows.get('highest peak at saturation')![0])).toEqual([highest]);
    const [tracing] = numbersIn(rows.get('added with traces on')![0]);
    expect(tracing).toBeGreaterThan(0);

    const resources = resourcesOf(gateway)!;
    const [requestRule, requestSet] = rows.get('memory request')!;
    const [limitRule, limitSet] = rows.get('memory limit')!;
    const headroom = (rule: string) => Number(/\+ (\d+)%/.exec(rule)![1]) / 100;
    expect(resources.requests!.memory).toBe(requestSet);
    expect(resources.limits!.memory).toBe(limitSet);
    expect(mebibytes(resources.requests!.memory)).toBeGreaterThanOrEqual(highest * (1 + headroom(requestRule)));
    expect(mebibytes(resources.limits!.memory)).toBeGreaterThanOrEqual((highest + tracing) * (1 + headroom(limitRule)));
  });

  it('when keys reach the pod, then they are files of a read-only secret volume that the ConfigMap names, never variables from the Secret', () => {
    for (const container of [...pod.initContainers, ...pod.containers]) {
      // The whole Secret as variables: no.
      expect(container.envFrom?.filter((source) => source.secretRef) ?? []).toEqual([]);
      for (const variable of mountsOf(container).env ?? [])
        if (variable.valueFrom?.secretKeyRef) expect([variable.name, KEY_FILE_VARIABLES.includes(variable.name)]).toEqual([variable.name, false]);
    }
    // What production requires (live mode, OIDC_ISSUER set, web apps ready) and the metrics token.
    for (const variable of ['UPSTREAM_PUBLIC_KEY', 'AUDIT_SIGNING_KEY', 'END_USER_PSEUDONYM_KEY', 'SESSION_KEY', 'DATA_KEY', 'METRICS_TOKEN'])
      expect([variable, config[variable]?.startsWith('/')]).toEqual([variable, true]);

    const mounted: string[] = [];
    for (const [variable, value] of Object.entries(config)) {
      if (!KEY_FILE_VARIABLES.includes(variable) && !value.startsWith('/var/run/secrets/')) continue;
      for (const path of pathsIn(variable, value)) {
        const file = secretFileAt(pod, gateway, path);
        // Each path is a file of a secret volume, mounted read-only, and a key of the example Secret.
        expect([variable, file?.readOnly]).toEqual([variable, true]);
        expect(secretKeys(file!.secretName)).toContain(file!.key);
        mounted.push(file!.key);
      }
    }
    // And the other way: every file-named key of the Secret is a file the ConfigMap names.
    expect(
      secretKeys('partner-gateway')
        .filter((key) => !/^[A-Z0-9_]+$/.test(key))
        .sort(),
    ).toEqual(mounted.sort());
    // Readable by the pod's group (fsGroup) and by nobody else; nobody writes them.
    expect((pod.securityContext as { fsGroup?: number }).fsGroup).toBe(1000);
    for (const volume of volumesOf(pod).filter((v) => v.secret)) {
      for (const mode of [volume.secret!.defaultMode ?? 0o644, ...(volume.secret!.items ?? []).map((i) => i.mode ?? volume.secret!.defaultMode ?? 0o644)])
        expect((mode & ~0o440).toString(8)).toBe('0');
    }
    // Variables from the Secret, each of them a key of the example Secret unless optional.
    for (const variable of mountsOf(gateway).env ?? []) {
      const ref = variable.valueFrom?.secretKeyRef;
      if (ref && !ref.optional) expect(secretKeys(ref.name)).toContain(ref.key);
    }
  });
});

/** deploy/prometheus's scrape job for the pods, and the production overlay's image. */
describe('deploy/kubernetes/overlays/production, scraped and pinned', () => {
  const objects = rendered['overlays/production'];
  const pod = podOf(objects);
  const gateway = gatewayOf(objects);
  const config = one(objects, 'ConfigMap').data!;
  const prometheusDir = join(process.cwd(), 'deploy', 'prometheus');

  it('when Prometheus scrapes the pods, then it sends the metrics token (a file of its own Secret, the gateway’s metrics-token), never an admin token', () => {
    interface ScrapeJob {
      job_name: string;
      metrics_path?: string;
      authorization?: { type?: string; credentials?: string; credentials_file?: string };
      bearer_token?: string;
      bearer_token_file?: string;
      basic_auth?: unknown;
      kubernetes_sd_configs: { role: string; namespaces: { names: string[] }; selectors: { role: string; label: string }[] }[];
      relabel_configs: { source_labels?: string[]; regex?: string; action?: string }[];
    }
    const file = join(prometheusDir, 'kubernetes-scrape.example.yml');
    const job = (parse(readFileSync(file, 'utf8')) as { scrape_configs: ScrapeJob[] }).scrape_configs.find((j) => j.job_name === 'partner-gateway')!;
    // The job the alert rules ask for (GatewayDown: up{job="partner-gateway"}).
    expect(readFileSync(join(prometheusDir, 'alerts.yml'), 'utf8')).toContain(`up{job="${job.job_name}"}`);
    expect(job.metrics_path ?? '/metrics').toBe('/metrics');

    // A file, never an inline credential; Bearer.
    expect(job).not.toHaveProperty('bearer_token');
    expect(job).not.toHaveProperty('bearer_token_file');
    expect(job).not.toHaveProperty('basic_auth');
    expect(job.authorization?.credentials).toBeUndefined();
    expect(job.authorization?.type ?? 'Bearer').toBe('Bearer');
    const credentials = job.authorization!.credentials_file!;
    expect(posix.isAbsolute(credentials)).toBe(true);
    // Prometheus's Secret holds it, in Prometheus's namespace, under the key the gateway's token has.
    const prometheusSecret = secrets.find((secret) => secret.metadata.name === basename(dirname(credentials)))!;
    expect(prometheusSecret).toBeDefined();
    expect(Object.keys(prometheusSecret.stringData ?? {})).toEqual([basename(credentials)]);
    const metricsToken = secretFileAt(pod, gateway, config.METRICS_TOKEN)!;
    expect(metricsToken.key).toBe(basename(credentials));
    // The namespace it is in may reach the pods' port.
    const namespace = (prometheusSecret.metadata as { namespace?: string }).namespace;
    const policy = one(objects, 'NetworkPolicy').spec as { ingress: { from: { namespaceSelector?: { matchLabels: Record<string, string> } }[] }[] };
    expect(policy.ingress.flatMap((rule) => rule.from).map((peer) => peer.namespaceSelector?.matchLabels['kubernetes.io/metadata.name'])).toContain(namespace);

    // It finds the gateway's pods, in the overlay's namespace, on the gateway container's port.
    const [discovery] = job.kubernetes_sd_configs;
    expect(discovery.namespaces.names).toEqual([one(objects, 'Namespace').metadata.name]);
    const labels = Object.fromEntries(
      discovery.selectors
        .find((s) => s.role === 'pod')!
        .label.split(',')
        .map((pair) => pair.split('=')),
    );
    expect(labels).toEqual((one(objects, 'Deployment').spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels);
    const keep = job.relabel_configs.find((r) => r.action === 'keep' && r.source_labels?.includes('__meta_kubernetes_pod_container_port_name'))!;
    expect(gateway.ports!.map((port) => port.name)).toContain(keep.regex);
  });

  it('when production pins the image by digest, then the form the overlay shows renders the digest in every container', () => {
    const overlay = join(process.cwd(), 'deploy', 'kubernetes', 'overlays', 'production');
    const text = readFileSync(join(overlay, 'kustomization.yaml'), 'utf8');
    // The commented entry after "which gives this form:".
    const lines = text.split('\n');
    const start = lines.findIndex((line) => /which gives this form:/.test(line));
    expect(start).toBeGreaterThan(0);
    const after = lines.slice(start + 1);
    const form = after.slice(
      0,
      after.findIndex((line) => !line.startsWith('#   ')),
    );
    const entry = (parse(form.map((line) => line.slice(4)).join('\n')) as { name: string; newName: string; digest: string }[])[0];
    expect(entry.digest).toMatch(/^sha256:[0-9a-f]{64}$/);

    // The overlay with its images entry replaced by that form, in a copy of deploy/kubernetes.
    const dir = mkdtempSync(join(tmpdir(), 'pgw-k8s-digest-'));
    try {
      cpSync(join(overlay, '..', '..'), dir, { recursive: true });
      const copy = join(dir, 'overlays', 'production');
      const kustomization = parse(text) as { images: unknown[] };
      kustomization.images = [entry];
      writeFileSync(join(copy, 'kustomization.yaml'), stringify(kustomization));
      const pinned = parseAllDocuments(execFileSync('kubectl', ['kustomize', copy], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })).map(
        (document) => document.toJS() as K8sObject,
      );
      const images = [...podOf(pinned).initContainers, ...podOf(pinned).containers].map((container) => container.image);
      expect(images.length).toBeGreaterThan(1);
      for (const image of images) expect(image).toBe(`${entry.newName}@${entry.digest}`);
      expect(entry.newName).toBe(gateway.image.split(':')[0]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
