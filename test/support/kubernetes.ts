import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/** The parts of the Kubernetes objects that the manifests' tests read. */
export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } };
}
export interface Probe {
  httpGet: { path: string; port: string | number };
}
export interface Container {
  name: string;
  image: string;
  command?: string[];
  ports?: { name: string; containerPort: number }[];
  env?: EnvVar[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
  securityContext?: { allowPrivilegeEscalation?: boolean; readOnlyRootFilesystem?: boolean; capabilities?: { drop?: string[] } };
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
}
export interface Volume {
  name: string;
  secret?: { secretName: string; items?: { key: string; path: string; mode?: number }[]; defaultMode?: number };
}
export interface PodSpec {
  terminationGracePeriodSeconds: number;
  securityContext: { runAsNonRoot: boolean; runAsUser: number };
  initContainers: Container[];
  containers: Container[];
  volumes?: Volume[];
}
export interface K8sObject {
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  spec?: Record<string, unknown>;
}

/**
 * deploy/kubernetes as scripts/validate-manifests.mjs renders it (kubectl kustomize) and validates
 * it (the Kubernetes schemas): the objects of the base, of each overlay, and of secrets.example.yaml.
 */
export function renderedManifests(): Record<string, K8sObject[]> {
  return JSON.parse(execFileSync('node', [join(process.cwd(), 'scripts', 'validate-manifests.mjs'), '--json'], { encoding: 'utf8' })) as Record<
    string,
    K8sObject[]
  >;
}

/** The Deployment's pod. */
export function podOf(objects: readonly K8sObject[]): PodSpec {
  return (objects.find((object) => object.kind === 'Deployment')!.spec as { template: { spec: PodSpec } }).template.spec;
}
