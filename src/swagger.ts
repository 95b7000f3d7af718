import { GatewayConfig } from './config/gateway-config';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { exampleDocumentExpiry } from './partner-api/bank-accounts/http/open-bank-account.request.dto';
import { Clock } from './common/domain/clock.port';
import { API_VERSION_HEADER, API_VERSIONS } from './common/domain/api-versions';
import { PARTNER_SCOPES } from './partner-api/domain/partner-api.vocabulary';
import {
  BROWSER_SESSION_SECURITY_SCHEME as SESSION_SCHEME,
  END_USER_SECURITY_SCHEME as END_USER_SCHEME,
  STAFF_SECURITY_SCHEME as STAFF_SCHEME,
} from './auth/http/auth.decorators';
import { IssuerDirectory } from './auth/oidc/issuer-metadata';

export function buildOpenApiDocument(app: NestFastifyApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Partner gateway')
    .setDescription(
      'The partner-facing API in front of the upstream banking provider. Every response is an envelope ' +
        '`{ status, message, data, error }`; errors carry `error.id`, which finds the request in the audit log. ' +
        'Partner servers authorise with a client token (`Authorization: Bearer <token>`, a server-side credential that never ships ' +
        'in an app); apps authorise as their end user, with an access token from the partner’s OpenID provider (`end-user`).',
    )
    .setVersion('1')
    // JSON Schema 2020-12: a nullable reference is `anyOf: [{ $ref }, { type: 'null' }]`, read alike by every validator.
    .setOpenAPIVersion('3.1.0')
    // The tokens are opaque random strings (pgw_…), not JWTs: the format says so (Nest's default says JWT).
    .addBearerAuth({
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'opaque client token (pgw_…)',
      description:
        'A partner’s or an admin’s client token, pasted as it is (`pgw_…`, without `Bearer`): one of the two that `npm start` prints ' +
        'at its first start (DEVELOPMENT CLIENT TOKENS), or one made by `npm run clients -- create`. Partner operations need the ' +
        'partner’s, the audit log and the clients the admin’s. A staff member’s access token may be pasted here too ' +
        '(`npm run -s users -- token --staff --user sam` in sandbox mode), or signed in for under `staff`.',
    })
    .addSecurity(END_USER_SCHEME, {
      type: 'openIdConnect',
      openIdConnectUrl: PLACEHOLDER_DISCOVERY,
      description:
        'An end user’s access token (RFC 9068) from the partner’s OpenID provider (OIDC_ISSUER), sent as `Authorization: Bearer <token>`, ' +
        'or bound to the app’s key with `Authorization: DPoP <token>` and a `DPoP` proof (RFC 9449). End users reach only their own ' +
        'customers; each operation names the scope it needs. The document served at /docs-json names the configured provider. ' +
        'In Swagger UI’s Authorize: tick the scopes and log in (with the development provider, client_id is filled in: leave ' +
        'client_secret empty, the client is public and uses PKCE).',
    })
    .addSecurity(STAFF_SCHEME, {
      type: 'openIdConnect',
      openIdConnectUrl: PLACEHOLDER_STAFF_DISCOVERY,
      description:
        'A staff member’s access token (RFC 9068) from the company’s own OpenID provider (STAFF_OIDC_ISSUER), sent as ' +
        '`Authorization: Bearer <token>`. Each staff operation names the roles that may call it (`x-staff-roles`): support, ' +
        'compliance, operator; most roles need a sign-in with a second factor (STAFF_MFA_ROLES). In sandbox mode, ' +
        '`npm run -s users -- token --staff --user sam` prints one.',
    })
    .addSecurity(SESSION_SCHEME, {
      type: 'apiKey',
      in: 'cookie',
      name: '__Host-gw_session',
      description:
        'A web app’s browser session (docs/security.md, "Web apps"): the HttpOnly cookie the gateway sets at login ' +
        '(`GET /api/v1/session/login`), sent by the browser, with the header `X-CSRF: 1` on every request. It acts as the ' +
        'logged-in end user, with the scopes their token grants. Swagger UI cannot send it: use the web app.',
    })
    // Every operation may name the API version it is written for (docs/api-contract.md, "Versions").
    .addGlobalParameters({
      name: API_VERSION_HEADER,
      in: 'header',
      required: false,
      description:
        'The API version this request is written for; without it, the calling client’s pinned version (the current one for end users and staff). ' +
        'Every answer names the version it was answered under in its own `Gateway-Version` header. An unknown version is 400 `REQUEST.VALIDATION_FAILED`.',
      schema: { type: 'string', enum: [...API_VERSIONS] },
    })
    .addServer('/', 'This gateway')
    .addTag('customers', 'Customers at the provider, owned by the calling client’s tenant')
    .addTag('balances', 'A customer’s balance, read from the provider')
    .addTag('bank-accounts', 'Bank accounts opened at the provider; the document expiry rule is enforced here first')
    .addTag('events', 'What happened to your resources, as your webhooks are sent it (docs/events.md)')
    .addTag('webhooks', 'Your webhook endpoints, signed as Standard Webhooks sign them, their deliveries and their keys (docs/webhooks.md)')
    .addTag('audit', 'The audit log, for support and compliance staff (staff roles, or an admin token)')
    .addTag('request-log', 'Your own requests and what became of each, from an `error.id` to the provider’s attempts (a partner’s server token)')
    .addTag(
      'receipts',
      'Proofs, checked offline, that the audit log holds your requests’ events: signed checkpoints, Merkle inclusion proofs, the keys (docs/security.md, "Receipts")',
    )
    .addTag('clients', 'The calling API client, and the list of clients (admin)')
    .addTag('session', 'A web app’s browser session: login through the partner’s OpenID provider, an HttpOnly cookie, logout (docs/security.md, "Web apps")')
    .addTag('health', 'Liveness and readiness probes')
    .build();
  return asPublished(SwaggerModule.createDocument(app, config));
}

type Parameter = { name?: string; in?: string; example?: unknown; schema?: { example?: unknown } };

type Operation = {
  security?: Record<string, string[]>[];
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: { $ref?: string } }> };
  responses?: Record<string, { headers?: Record<string, unknown> }>;
  [extension: `x-${string}`]: unknown;
};

/** Every operation of the document under `under` (all of them by default), each path's methods in turn. */
function operationsOf(document: OpenAPIObject, under = '/'): Operation[] {
  return Object.entries(document.paths)
    .filter(([path]) => path.startsWith(under))
    .flatMap(([, operations]) => Object.values(operations as Record<string, Operation>));
}

/**
 * What the decorators cannot say on their own, said once over every operation:
 * - an operation marked @Public() carries the empty requirement `{}`: written `security: []`, it
 *   needs no credential;
 * - what the validation pipe refuses: a body's schema admits no property it does not name
 *   (`additionalProperties: false`), and an operation with query parameters says that any other is
 *   refused (`x-additional-query-parameters: false`: OpenAPI has no word for it where each
 *   parameter is listed on its own), unless the route says otherwise itself;
 * - every answer names the version it was answered under: a response header, declared once.
 */
function asPublished(document: OpenAPIObject): OpenAPIObject {
  const schemas = (document.components?.schemas ?? {}) as Record<string, { additionalProperties?: boolean }>;
  const versionHeader = { $ref: `#/components/headers/${API_VERSION_HEADER}` };
  for (const operation of operationsOf(document)) {
    if (operation.security?.some((requirement) => Object.keys(requirement).length === 0)) operation.security = [];
    for (const media of Object.values(operation.requestBody?.content ?? {})) {
      const name = media.schema?.$ref?.split('/').pop();
      if (name && schemas[name]) schemas[name].additionalProperties = false;
    }
    if (operation.parameters?.some((parameter) => parameter.in === 'query')) operation['x-additional-query-parameters'] ??= false;
    for (const response of Object.values(operation.responses ?? {})) response.headers = { ...response.headers, [API_VERSION_HEADER]: versionHeader };
  }
  document.components = {
    ...document.components,
    headers: {
      ...document.components?.headers,
      [API_VERSION_HEADER]: {
        description: 'The API version this answer was given under (docs/api-contract.md, "Versions").',
        schema: { type: 'string', enum: [...API_VERSIONS] },
      },
    },
  };
  return document;
}

type Properties = Record<string, { example?: unknown }>;

/** The request-body fields whose examples change with the day (see withExamplesForToday). */
const DAILY_EXAMPLES: readonly (readonly [schema: string, property: string])[] = [
  ['OpenBankAccountRequest', 'expiration_date'],
  ['OpenBankAccountRequest', 'reference'],
  ['CreateCustomerRequest', 'reference'],
];

function propertiesOf(document: OpenAPIObject, schema: string): Properties | undefined {
  return (document.components?.schemas?.[schema] as { properties?: Properties } | undefined)?.properties;
}

/**
 * The document without the examples that change every day: what openapi.json holds, and what a
 * served document is compared with.
 */
export function withoutDailyExamples(document: OpenAPIObject): OpenAPIObject {
  const stable = structuredClone(document);
  for (const [schema, property] of DAILY_EXAMPLES) {
    const field = propertiesOf(stable, schema)?.[property];
    if (field) delete field.example;
  }
  return stable;
}

/**
 * Every example of an id: a customer's in the body of a bank account and in paths; a bank
 * account's in the paths under `under`.
 */
function useIdExample(document: OpenAPIObject, name: 'customer_id' | 'id', value: string, under = '/'): void {
  if (name === 'customer_id') {
    const field = propertiesOf(document, 'OpenBankAccountRequest')?.customer_id;
    if (field) field.example = value;
  }
  for (const parameter of operationsOf(document, under).flatMap((operation) => operation.parameters ?? [])) {
    if (parameter.in !== 'path' || parameter.name !== name) continue;
    parameter.example = value;
    if (parameter.schema) parameter.schema.example = value;
  }
}

/**
 * Examples are recomputed each time the document is served, so that "Try it out" sends a body that
 * passes validation on the day it is shown (the document expiry rule), with a fresh reference (a
 * reused one would be a replay, or a 422 with another body), and, in sandbox mode, for the demo
 * customer that exists (development's demo customer, dev/demo/demo-customer.ts) rather than an id no provider knows.
 */
/** In sandbox mode, what the examples name: the demo customer, and its account once it has one. */
export interface DemoResources {
  readonly customerId: string;
  readonly bankAccountId?: string;
}

export function withExamplesForToday(document: OpenAPIObject, now: Date, demo?: DemoResources): OpenAPIObject {
  const patched = structuredClone(document);
  for (const [schema, property] of DAILY_EXAMPLES) {
    const field = propertiesOf(patched, schema)?.[property];
    if (field) field.example = property === 'expiration_date' ? exampleDocumentExpiry(now) : randomUUID();
  }
  if (demo) useIdExample(patched, 'customer_id', demo.customerId);
  if (demo?.bankAccountId) useIdExample(patched, 'id', demo.bankAccountId, '/api/v1/bank-accounts/');
  return patched;
}

/** What the document in the repository names as the discovery document: the served one names the configured provider's. */
const PLACEHOLDER_DISCOVERY = 'https://login.partner.example/.well-known/openid-configuration';
/** The company's provider, as the document in the repository names it. */
const PLACEHOLDER_STAFF_DISCOVERY = 'https://login.gateway-operator.example/.well-known/openid-configuration';

/**
 * Where Swagger UI reads the end users' provider: its discovery document, as the gateway last read
 * it, offering the one flow Swagger UI can complete (authorization code with PKCE). Swagger UI's
 * Authorize shows a form for every grant type a provider advertises (a refresh-token form beside
 * the login, say), which a Swagger user cannot use.
 */
export const SWAGGER_DISCOVERY_PATH = '/docs-openid-configuration';
/** The same for the company's provider, where staff sign in (the `staff` scheme). */
export const SWAGGER_STAFF_DISCOVERY_PATH = '/docs-staff-openid-configuration';

/**
 * Drops a security scheme from the document and from every operation's requirements. An operation
 * that this leaves with none (a browser session's own endpoints, say) is dropped too: an empty list
 * would say it needs no credential at all.
 */
function withoutScheme(document: OpenAPIObject, name: string): void {
  delete document.components?.securitySchemes?.[name];
  for (const [path, operations] of Object.entries(document.paths)) {
    const byMethod = operations as Record<string, { security?: Record<string, string[]>[] }>;
    for (const [method, operation] of Object.entries(byMethod)) {
      if (!operation.security || operation.security.length === 0) continue;
      operation.security = operation.security.filter((requirement) => !(name in requirement));
      if (operation.security.length === 0) delete byMethod[method];
    }
    if (Object.keys(byMethod).length === 0) delete document.paths[path];
  }
}

/**
 * The document as this deployment serves it (Swagger UI, /docs-json), with what a caller of this
 * deployment can use, in the order they need it: the client token first, then, where an OpenID
 * provider is configured, an end user's login through it (`discoveryUrl`: where Swagger UI reads
 * it). The browser session's cookie is left out: a web app's browser sends it, which Swagger UI
 * cannot (the repository's openapi.json documents it). Without a provider (live mode, no
 * OIDC_ISSUER), no end-user scheme either, which no token could satisfy. Changes `document` in place
 * (withExamplesForToday's copy, when served).
 */
export function forThisDeployment(document: OpenAPIObject, discoveryUrl: string | undefined, staffDiscoveryUrl?: string): OpenAPIObject {
  withoutScheme(document, SESSION_SCHEME);
  for (const [name, url] of [
    [END_USER_SCHEME, discoveryUrl],
    [STAFF_SCHEME, staffDiscoveryUrl],
  ] as const) {
    const scheme = document.components?.securitySchemes?.[name] as { openIdConnectUrl?: string } | undefined;
    if (!scheme) continue;
    if (url) scheme.openIdConnectUrl = url;
    else withoutScheme(document, name);
  }
  return document;
}

/** Serves `path` (SWAGGER_DISCOVERY_PATH, SWAGGER_STAFF_DISCOVERY_PATH): the provider's discovery document, read through the gateway's own directory of issuers. */
function serveDiscoveryForSwaggerUi(app: NestFastifyApplication, issuer: string, path: string): void {
  const directory = app.get(IssuerDirectory);
  app
    .getHttpAdapter()
    .getInstance()
    // The provider's discovery failing (logged by the directory) is thrown to the one error filter: the envelope, and, on an admin path, its audit event.
    .get(path, async (_request, reply) => {
      const { document } = await directory.metadataOf(issuer);
      return reply.header('cache-control', 'no-store').send({ ...document, grant_types_supported: ['authorization_code'], response_types_supported: ['code'] });
    });
}

/** What Swagger UI offers: its logins at the configured providers, and the demo customer in the examples. */
interface SwaggerOptions {
  /** In sandbox mode, the demo customer and its account (their ids in the examples). */
  readonly demo?: () => DemoResources | undefined;
  /** The first trusted issuer, and the audience its tokens must name: Swagger UI's end-user login (authorization code + PKCE). */
  readonly endUsers?: { readonly issuer: string; readonly audience: string; readonly clientId: string };
  /** The company's provider: Swagger UI's staff login (authorization code + PKCE), with its client there when known. */
  readonly staff?: { readonly issuer: string; readonly clientId?: string };
  /** PUBLIC_BASE_URL, when set: the served document's URLs are absolute on it. */
  readonly publicBaseUrl?: string;
}

/** Swagger UI's options from the configuration: the first trusted issuer's login (the development provider's public client), the staff's. */
function swaggerOptionsOf(config: GatewayConfig, demo?: () => DemoResources | undefined): SwaggerOptions {
  const [issuer] = config.issuers;
  const staff = config.staffProvider;
  return {
    demo,
    publicBaseUrl: config.settings.PUBLIC_BASE_URL,
    // Live mode: the client is typed in Authorize.
    endUsers: issuer && { issuer: issuer.issuer, audience: issuer.audience, clientId: config.development.identityProvider?.swaggerClientId ?? '' },
    // STAFF_OIDC_CLIENT_ID at STAFF_OIDC_ISSUER, or the development staff provider's client.
    staff: staff && { issuer: staff.issuer, ...(staff.swaggerClientId ? { clientId: staff.swaggerClientId } : {}) },
  };
}

/**
 * Swagger UI's OAuth 2 redirect page, where its login ends. Swagger UI, served at /docs, names
 * `/oauth2-redirect.html` at the root as its redirect URI: the page and its script are served
 * there, as swagger-ui-dist ships them (no inline script: the CSP stands).
 */
function serveOAuth2Redirect(app: NestFastifyApplication): void {
  // Resolved as @nestjs/swagger resolves it, from the service's own directory (npm start runs there, as the image does).
  const swaggerModule = createRequire(join(process.cwd(), 'noop.js')).resolve('@nestjs/swagger');
  const dist = dirname(createRequire(swaggerModule).resolve('swagger-ui-dist/package.json'));
  const files = {
    '/oauth2-redirect.html': { type: 'text/html; charset=utf-8', body: readFileSync(join(dist, 'oauth2-redirect.html')) },
    '/oauth2-redirect.js': { type: 'text/javascript; charset=utf-8', body: readFileSync(join(dist, 'oauth2-redirect.js')) },
  };
  const fastify = app.getHttpAdapter().getInstance();
  for (const [path, file] of Object.entries(files)) {
    fastify.get(path, (_request, reply) =>
      reply
        // The popup arrives here from the provider's origin: it must stay in its opener's group to hand the code back.
        .removeHeader('cross-origin-opener-policy')
        .header('content-type', file.type)
        .header('cache-control', 'no-store')
        .send(file.body),
    );
  }
}

export function setupSwagger(app: NestFastifyApplication, config: GatewayConfig, demo?: () => DemoResources | undefined): void {
  const options = swaggerOptionsOf(config, demo);
  const clock = app.get(Clock);
  const { endUsers, staff } = options;
  if (endUsers || staff) serveOAuth2Redirect(app);
  if (endUsers) serveDiscoveryForSwaggerUi(app, endUsers.issuer, SWAGGER_DISCOVERY_PATH);
  if (staff) serveDiscoveryForSwaggerUi(app, staff.issuer, SWAGGER_STAFF_DISCOVERY_PATH);
  // Absolute where the public origin is known (OpenAPI 3.0 wants a URL); else from this origin's root, as Swagger UI reads it.
  const origin = options.publicBaseUrl?.replace(/\/$/, '') ?? '';
  const discoveryUrl = endUsers && `${origin}${SWAGGER_DISCOVERY_PATH}`;
  const staffDiscoveryUrl = staff && `${origin}${SWAGGER_STAFF_DISCOVERY_PATH}`;
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: 'docs-json',
    yamlDocumentUrl: 'docs-yaml',
    swaggerOptions: {
      persistAuthorization: true,
      ...(endUsers || staff
        ? {
            // Swagger UI has one client id for every login: the staff's where there is one (live /docs is staff's;
            // in sandbox mode both development providers name their Swagger UI client alike). No `resource`
            // parameter (RFC 8707): each provider issues its tokens for its own default audience (the gateway's
            // there), and a provider that knows no resource parameter (Entra ID's v2 endpoint) would refuse it.
            initOAuth: {
              clientId: staff?.clientId ?? endUsers?.clientId ?? '',
              usePkceWithAuthorizationCodeGrant: true,
              scopes: ['openid', ...(endUsers ? PARTNER_SCOPES : [])],
            },
          }
        : {}),
    },
    patchDocumentOnRequest: (_request, _reply, document) =>
      forThisDeployment(withExamplesForToday(document, clock.now(), options.demo?.()), discoveryUrl, staffDiscoveryUrl),
  });
}
