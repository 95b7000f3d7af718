import { randomUUID } from 'node:crypto';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { exampleDocumentExpiry } from './bank-accounts/http/open-bank-account.request.dto';
import { Clock } from './common/clock.port';

export function buildOpenApiDocument(app: NestFastifyApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Partner gateway')
    .setDescription(
      'The partner-facing API in front of the upstream banking provider. Every response is an envelope ' +
        '`{ status, message, data, error }`; errors carry `error.id`, which finds the request in the audit log. ' +
        'Authorise with a client token (`Authorization: Bearer <token>`).',
    )
    .setVersion('1')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'A client token from `npm run clients -- create`' })
    .build();
  return SwaggerModule.createDocument(app, config);
}

type Properties = Record<string, { example?: unknown }>;

/**
 * Examples are recomputed each time the document is served, so that "Try it out" sends a body that
 * passes validation on the day it is shown (the document expiry rule), with a fresh reference (a
 * reused one would be a replay, or a 422 with another body).
 */
export function withExamplesForToday(document: OpenAPIObject, now: Date): OpenAPIObject {
  const patched = structuredClone(document);
  const propertiesOf = (name: string) => (patched.components?.schemas?.[name] as { properties?: Properties } | undefined)?.properties;
  const account = propertiesOf('OpenBankAccountRequestDto');
  if (account?.expiration_date) account.expiration_date.example = exampleDocumentExpiry(now);
  for (const properties of [account, propertiesOf('CreateCustomerRequestDto')]) {
    if (properties?.reference) properties.reference.example = randomUUID();
  }
  return patched;
}

export function setupSwagger(app: NestFastifyApplication): void {
  const clock = app.get(Clock);
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: 'docs-json',
    yamlDocumentUrl: 'docs-yaml',
    swaggerOptions: { persistAuthorization: true },
    patchDocumentOnRequest: (_request, _reply, document) => withExamplesForToday(document, clock.now()),
  });
}
