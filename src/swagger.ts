import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';

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

export function setupSwagger(app: NestFastifyApplication): void {
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: 'docs-json',
    yamlDocumentUrl: 'docs-yaml',
    swaggerOptions: { persistAuthorization: true },
  });
}
