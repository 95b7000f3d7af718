import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from '../src/app.module';
import { validateEnvironment } from '../src/config/load-config';
import { GatewayConfig } from '../src/config/gateway-config';
import { generateSandboxKeys } from './sandbox/sandbox-keys';
import { buildOpenApiDocument, withoutDailyExamples } from '../src/swagger';
import { sandboxUpstreamSettings } from '../src/upstream/upstream.settings';

/**
 * `npm run openapi:export [file]`: writes the OpenAPI document (openapi.json by default) without
 * starting anything. The application graph is built in preview mode: routes and their decorators
 * are read, no provider runs, no database or provider is contacted.
 */
async function main(): Promise<void> {
  const target = resolve(process.argv[2] ?? 'openapi.json');
  const config = validateEnvironment({ LOG_LEVEL: 'silent' });
  const keys = generateSandboxKeys();
  const upstream = sandboxUpstreamSettings(config, { baseUrl: 'http://127.0.0.1:0', bearerToken: 'unused', publicKeyPem: keys.publicKeyPem });
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot({ config: new GatewayConfig(config), database: { url: 'postgres://unused' }, upstream }),
    new FastifyAdapter(),
    {
      preview: true,
      logger: false,
    },
  );
  const document = withoutDailyExamples(buildOpenApiDocument(app));
  writeFileSync(target, JSON.stringify(document, null, 2) + '\n');
  await app.close();
  process.stdout.write(`OpenAPI document written to ${target}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
