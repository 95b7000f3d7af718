import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { knownVariables, validateEnvironment } from '../../src/config/load-config';
import { shutdownTimes } from '../../src/config/provider-call';
import { readTrustedProxies } from '../../src/config/trusted-proxies';
import { generateSandboxKeys } from '../../src/sandbox/sandbox-keys';
import { K8sObject, podOf, renderedManifests } from '../support/kubernetes';

/**
 * The Kubernetes manifests (deploy/kubernetes), rendered by kubectl kustomize and validated against
 * the Kubernetes schemas by scripts/validate-manifests.mjs, held to the code: the probes' paths,
 * the ports, every variable, the secrets, the grace period, the migrations and the security context.
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

/** Test values that the configuration's validation accepts, for the secrets' keys. */
function secretValues(): Record<string, string> {
  const { privateKey } = generateKeyPairSync('ed25519');
  return {
    DATABASE_URL: 'postgres://gateway:x@postgres.example.internal:5432/gateway',
    RATE_LIMIT_REDIS_URL: 'rediss://:x@redis.example.internal:6379',
    UPSTREAM_BEARER_TOKEN: 'a-provider-token',
    UPSTREAM_PUBLIC_KEY: generateSandboxKeys().publicKeyPem,
    AUDIT_SIGNING_KEY: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    END_USER_PSEUDONYM_KEY: randomBytes(32).toString('base64'),
    SESSION_KEY: randomBytes(32).toString('base64'),
  };
}

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

  it('when the variables are read, then each is one the service knows, and with the secrets they make a valid production configuration', () => {
    const known = new Set(knownVariables());
    const named = [...Object.keys(config), ...secretKeys('partner-gateway'), ...secretKeys('partner-gateway-migrations')];
    for (const variable of named) expect(variable.startsWith('OTEL_') || known.has(variable)).toBe(true);

    const env = { ...config, ...secretValues() };
    const valid = validateEnvironment(env);
    expect(valid.NODE_ENV).toBe('production');
    expect(valid.UPSTREAM_BASE_URL).toBe(config.UPSTREAM_BASE_URL);
    expect(valid.MIGRATIONS_RUN).toBe(false);
    // The example secret names every key the test had to supply.
    expect(secretKeys('partner-gateway').sort()).toEqual(Object.keys(secretValues()).sort());
  });

  it('finding 2: when TRUST_PROXY is read, then it names the ingress’s addresses, never true (every hop, which lets a caller choose its own address)', () => {
    expect(config.TRUST_PROXY).toBeDefined();
    expect(['true', 'yes', 'on']).not.toContain(config.TRUST_PROXY.trim().toLowerCase());
    expect(readTrustedProxies(config.TRUST_PROXY, config).kind).toBe('addresses');
  });

  it('finding 5: when web apps are turned on (OIDC_CLIENT_ID), then the example Secret already holds the SESSION_KEY every pod shares, and production accepts it', () => {
    expect(secretKeys('partner-gateway')).toContain('SESSION_KEY');

    const valid = validateEnvironment({ ...config, ...secretValues(), OIDC_CLIENT_ID: 'partner-web', OIDC_CLIENT_SECRET: 'a-client-secret' });
    expect(valid.SESSION_KEY).toBeDefined();
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
    expect(gateway.envFrom?.map((source) => source.secretRef?.name).filter(Boolean)).toEqual(['partner-gateway']);
    expect(secretKeys('partner-gateway')).not.toContain('MIGRATIONS_DATABASE_URL');
    expect(config.MIGRATIONS_RUN).toBe('false');
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
});
