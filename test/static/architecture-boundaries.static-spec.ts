import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

/**
 * The boundaries of docs/architecture.md are enforced by `npm run lint` (dependency-cruiser with
 * .dependency-cruiser.cjs). Each rule is tried on a small tree of its own, beside the real one, so
 * that the real src/ is never touched: a rule that lets its probe through fails here.
 */
const ROOT = process.cwd();
const run = promisify(execFile);

async function cruise(files: Record<string, string>): Promise<{ code: number; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'pgw-boundaries-'));
  try {
    copyFileSync(join(ROOT, '.dependency-cruiser.cjs'), join(dir, '.dependency-cruiser.cjs'));
    copyFileSync(join(ROOT, 'tsconfig.json'), join(dir, 'tsconfig.json'));
    // Which packages are development dependencies is read from here.
    copyFileSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(dir, dirname(path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    try {
      const { stdout } = await run(
        process.execPath,
        [
          join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs'),
          ...['src', 'dev'].filter((folder) => existsSync(join(dir, folder))),
          '--config',
          '.dependency-cruiser.cjs',
        ],
        { cwd: dir },
      );
      return { code: 0, output: stdout };
    } catch (error) {
      const failed = error as { code: number; stdout: string };
      return { code: failed.code, output: failed.stdout };
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('Architecture boundaries (npm run lint)', () => {
  it('when the real tree is cruised, then it keeps every rule', async () => {
    const { stdout } = await run(
      process.execPath,
      [join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs'), 'src', 'dev', '--config', '.dependency-cruiser.cjs'],
      { cwd: ROOT },
    );

    expect(stdout).toMatch(/no dependency violations found/);
  });

  it('when the service imports development tooling, then lint fails; development tooling importing the service passes', async () => {
    const tooling = { 'dev/sandbox/sandbox.server.ts': 'export const sandbox = 1;\n' };
    const reached = await cruise({
      ...tooling,
      'src/main.ts': `import { sandbox } from '../dev/sandbox/sandbox.server';\nexport const started = sandbox;\n`,
    });
    const reaching = await cruise({
      'src/serve.ts': 'export const serve = 1;\n',
      'src/main.ts': `import { serve } from './serve';\nexport const started = serve;\n`,
      'dev/main.ts': `import { serve } from '../src/serve';\nimport { sandbox } from './sandbox/sandbox.server';\nexport const started = [serve, sandbox];\n`,
      ...tooling,
    });

    expect(reached.code).not.toBe(0);
    expect(reached.output).toMatch(/service-never-reaches-development-tooling: src\/main\.ts → dev\/sandbox\/sandbox\.server\.ts/);
    expect(reaching).toEqual({ code: 0, output: expect.stringMatching(/no dependency violations found/) });
  });

  it.each([
    ['@nestjs/core/router/route-params-factory', 'RouteParamsFactory'],
    ['@nestjs/core/helpers/execution-context-host', 'ExecutionContextHost'],
    ['@nestjs/common/constants', 'PATH_METADATA'],
    ['@nestjs/common/enums/route-paramtypes.enum', 'RouteParamtypes'],
    ['@nestjs/platform-fastify/constants.js', 'FASTIFY_ROUTE_CONFIG_METADATA'],
  ])('when the service imports a framework’s internal path (%s), then lint fails; its documented entry point passes', async (internal, name) => {
    const reaching = await cruise({ 'src/main.ts': `import { ${name} } from '${internal}';\nexport const used = ${name};\n` });
    const documented = await cruise({
      'src/main.ts': `import { Reflector } from '@nestjs/core';\nimport { SetMetadata } from '@nestjs/common';\nimport { RouteConfig } from '@nestjs/platform-fastify';\nexport const used = [Reflector, SetMetadata, RouteConfig];\n`,
    });

    expect(reaching.code).not.toBe(0);
    expect(reaching.output).toMatch(/no-framework-internals: src\/main\.ts → node_modules\/@nestjs\//);
    expect(documented).toEqual({ code: 0, output: expect.stringMatching(/no dependency violations found/) });
  });

  it('when the service imports a development dependency (the image installs none), then lint fails', async () => {
    const result = await cruise({
      'src/main.ts': `import Provider from 'oidc-provider';\nexport const p = Provider;\n`,
    });

    expect(result.code).not.toBe(0);
    expect(result.output).toMatch(/service-needs-no-development-package: src\/main\.ts → node_modules\/oidc-provider/);
  });

  it.each([
    ['TypeORM', `import { Repository } from 'typeorm';\nexport type R = Repository<object>;\n`],
    ['undici', `import { request } from 'undici';\nexport const r = request;\n`],
    ['Fastify', `import type { FastifyRequest } from 'fastify';\nexport type R = FastifyRequest;\n`],
    ['@nestjs/swagger', `import { ApiProperty } from '@nestjs/swagger';\nexport const a = ApiProperty;\n`],
    ['its own http/ folder', `import { x } from '../http/x.controller';\nexport const y = x;\n`],
    ['its own persistence/ folder', `import { x } from '../persistence/x.repository';\nexport const y = x;\n`],
    ['its own provider adapter', `import { x } from '../provider/x.adapter';\nexport const y = x;\n`],
    ['the provider’s protocol', `import { x } from '../../../upstream/x.client';\nexport const y = x;\n`],
  ])('when a domain file imports %s, then lint fails', async (_what, text) => {
    const result = await cruise({
      'src/partner-api/customers/domain/probe.service.ts': text,
      'src/partner-api/customers/http/x.controller.ts': 'export const x = 1;\n',
      'src/partner-api/customers/persistence/x.repository.ts': 'export const x = 1;\n',
      'src/partner-api/customers/provider/x.adapter.ts': 'export const x = 1;\n',
      'src/upstream/x.client.ts': 'export const x = 1;\n',
    });

    expect(result.code).not.toBe(0);
    expect(result.output).toMatch(/domain-is-pure: src\/partner-api\/customers\/domain\/probe\.service\.ts/);
  });

  it.each(['common', 'config', 'database'])('when a file in %s/ imports a feature, then lint fails', async (lower) => {
    const result = await cruise({
      [`src/${lower}/probe.ts`]: `import { x } from '../partner-api/customers/domain/x.port';\nexport const y = x;\n`,
      'src/partner-api/customers/domain/x.port.ts': 'export const x = 1;\n',
    });

    expect(result.code).not.toBe(0);
    expect(result.output).toMatch(/lower-layers-know-no-feature/);
  });

  it.each([
    ['http/', 'src/auth/http/x.guard.ts'],
    ['persistence/', 'src/auth/persistence/x.repository.ts'],
  ])('when a feature imports another feature’s %s, then lint fails', async (_what, target) => {
    const result = await cruise({
      'src/partner-api/customers/http/probe.controller.ts': `import { x } from '../../../${target.slice(4, -3)}';\nexport const y = x;\n`,
      [target]: 'export const x = 1;\n',
    });

    expect(result.code).not.toBe(0);
    expect(result.output).toMatch(/features-meet-through-domain-or-module: src\/partner-api\/customers\/http\/probe\.controller\.ts/);
  });

  it.each([
    ['its domain/', 'src/auth/domain/x.service.ts'],
    ['its module', 'src/auth/auth.module.ts'],
    ['its decorators', 'src/auth/http/auth.decorators.ts'],
  ])('when a feature imports another feature through %s, then lint passes', async (_what, target) => {
    const result = await cruise({
      'src/partner-api/customers/http/probe.controller.ts': `import { x } from '../../../${target.slice(4, -3)}';\nexport const y = x;\n`,
      [target]: 'export const x = 1;\n',
    });

    expect(result.output).not.toMatch(/features-meet-through-domain-or-module/);
  });

  it('when a file is reached from no entry point, then lint fails naming it; reached, it passes', async () => {
    const tree = {
      'src/main.ts': `import { x } from './partner-api/customers/domain/used';\nexport const y = x;\n`,
      'src/partner-api/customers/domain/used.ts': 'export const x = 1;\n',
    };

    const dead = await cruise({ ...tree, 'src/partner-api/customers/domain/dead.ts': 'export const z = 1;\n' });
    const alive = await cruise(tree);

    expect(dead.code).not.toBe(0);
    expect(dead.output).toMatch(/no-unused-files: src\/partner-api\/customers\/domain\/dead\.ts/);
    expect(alive.output).not.toMatch(/no-unused-files/);
  });

  it('when anything but the identify stage asks the Authenticator who is calling, then lint fails; the stage may', async () => {
    const authenticator = 'export class Authenticator { authenticate(): string { return "x"; } }\n';
    const elsewhere = await cruise({
      'src/auth/domain/authenticator.ts': authenticator,
      'src/partner-api/customers/http/x.controller.ts': `import { Authenticator } from '../../../auth/domain/authenticator';\nexport const y = Authenticator;\n`,
    });
    const stage = await cruise({
      'src/auth/domain/authenticator.ts': authenticator,
      'src/auth/http/identify.stage.ts': `import { Authenticator } from '../domain/authenticator';\nexport const y = Authenticator;\n`,
    });

    expect(elsewhere.code).not.toBe(0);
    expect(elsewhere.output).toMatch(/one-place-identifies-callers/);
    expect(stage.output).not.toMatch(/one-place-identifies-callers/);
  });

  it('when anything but a slice’s provider adapter speaks the provider’s protocol, then lint fails; the adapter may', async () => {
    const client = { 'src/upstream/x.client.ts': 'export const x = 1;\n' };
    const elsewhere = await cruise({
      ...client,
      'src/partner-api/balances/balances.module.ts': `import { x } from '../../upstream/x.client';\nexport const y = x;\n`,
    });
    const adapter = await cruise({
      ...client,
      'src/partner-api/balances/provider/x.adapter.ts': `import { x } from '../../../upstream/x.client';\nexport const y = x;\n`,
    });

    expect(elsewhere.code).not.toBe(0);
    expect(elsewhere.output).toMatch(/only-provider-adapters-speak-the-protocol: src\/partner-api\/balances\/balances\.module\.ts/);
    expect(adapter.output).not.toMatch(/only-provider-adapters-speak-the-protocol/);
  });

  it('when two feature folders import each other, file by file without a cycle of files, then lint fails', async () => {
    const result = await cruise({
      'src/audit/a.ts': `import { b } from '../auth/b';\nexport const a = b;\n`,
      'src/auth/c.ts': `import { d } from '../audit/d';\nexport const c = d;\n`,
      'src/auth/b.ts': 'export const b = 1;\n',
      'src/audit/d.ts': 'export const d = 1;\n',
    });

    expect(result.code).not.toBe(0);
    expect(result.output).toMatch(/no-circular-folders/);
  });
});
