#!/usr/bin/env node
/**
 * Renders the Kubernetes manifests (deploy/kubernetes: the base and each overlay) with
 * `kubectl kustomize`, offline, and validates every object against the Kubernetes API's JSON
 * schemas (kubernetes-models: generated from the Kubernetes OpenAPI document, validated by ajv).
 * The example secrets (secrets.example.yaml) are validated too. Exit 1 on the first invalid object.
 *
 *   node scripts/validate-manifests.mjs           one line per rendering
 *   node scripts/validate-manifests.mjs --json    the rendered objects, as JSON, by directory
 *
 * kubectl: one that embeds kustomize v5 or later (kubectl 1.27 on): the manifests use `labels` and
 * name the base under `resources`, which kustomize v2 (kubectl 1.20, Debian 12's kubernetes-client)
 * does not read. An older one is refused here, with its version, before anything is rendered.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';

const root = join(import.meta.dirname, '..', 'deploy', 'kubernetes');
const json = process.argv.includes('--json');

/** kubernetes-models' module for an apiVersion and kind (core objects: v1/Kind; the others: group/version/Kind). */
async function modelOf(apiVersion, kind) {
  const path = `kubernetes-models/${apiVersion}/${kind}`;
  try {
    return (await import(path))[kind];
  } catch (error) {
    throw new Error(`${apiVersion} ${kind}: not a Kubernetes API object that kubernetes-models knows`, { cause: error });
  }
}

async function validate(objects, where) {
  for (const object of objects) {
    if (!object || typeof object.apiVersion !== 'string' || typeof object.kind !== 'string') throw new Error(`${where}: an object without apiVersion and kind`);
    const Model = await modelOf(object.apiVersion, object.kind);
    try {
      new Model(object).validate();
    } catch (error) {
      throw new Error(`${where}: ${object.kind} ${object.metadata?.name}: ${error.message}`, { cause: error });
    }
  }
}

function documents(text, where) {
  return parseAllDocuments(text)
    .map((document) => {
      if (document.errors.length > 0) throw new Error(`${where}: ${document.errors[0].message}`);
      return document.toJS();
    })
    .filter((object) => object !== null);
}

const MIN_KUSTOMIZE_MAJOR = 5;

/** kubectl's embedded kustomize, refused when older than the manifests need. */
function checkKustomize() {
  const version = JSON.parse(execFileSync('kubectl', ['version', '--client', '-o', 'json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
  const kustomize = version.kustomizeVersion ?? '';
  const major = Number(/^v?(\d+)\./.exec(kustomize)?.[1] ?? 0);
  if (major < MIN_KUSTOMIZE_MAJOR)
    throw new Error(
      `kubectl ${version.clientVersion?.gitVersion ?? '?'} embeds kustomize ${kustomize || 'v2 or older'}: the manifests need kustomize v${MIN_KUSTOMIZE_MAJOR} or later (kubectl 1.27 or later)`,
    );
}

const kustomizations = ['base', ...readdirSync(join(root, 'overlays')).map((overlay) => join('overlays', overlay))];
const rendered = {};
try {
  checkKustomize();
  for (const dir of kustomizations) {
    const text = execFileSync('kubectl', ['kustomize', join(root, dir)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const objects = documents(text, dir);
    await validate(objects, dir);
    rendered[dir] = objects;
    if (!json)
      process.stdout.write(`${relative(process.cwd(), join(root, dir))}: ${objects.length} objects valid (${objects.map((o) => o.kind).join(', ')})\n`);
  }
  const secrets = documents(readFileSync(join(root, 'secrets.example.yaml'), 'utf8'), 'secrets.example.yaml');
  await validate(secrets, 'secrets.example.yaml');
  rendered['secrets.example.yaml'] = secrets;
  if (!json) process.stdout.write(`secrets.example.yaml: ${secrets.length} objects valid\n`);
} catch (error) {
  process.stderr.write(`${error.code === 'ENOENT' ? 'kubectl is not installed (Debian: apt-get install kubernetes-client)' : error.stderr || error.message}\n`);
  process.exit(1);
}
if (json) process.stdout.write(JSON.stringify(rendered));
