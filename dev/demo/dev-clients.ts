import { ApiClientsService } from '../../src/auth/domain/api-clients.service';

export interface DevTokens {
  readonly partner: string;
  readonly admin: string;
}

/**
 * On a first start with embedded defaults, one partner and one admin client so that a new user can
 * call the API at once. Only when no client exists yet: the tokens are shown once, like any other.
 */
export async function createDevClientsIfNone(clients: ApiClientsService, tenant: string): Promise<DevTokens | undefined> {
  if ((await clients.count()) > 0) return undefined;
  const partner = await clients.create({ name: 'dev-partner', role: 'partner', tenant, expiresAt: null });
  const admin = await clients.create({ name: 'dev-admin', role: 'admin', tenant, expiresAt: null });
  return { partner: partner.token, admin: admin.token };
}

export function devTokensBanner(
  tokens: DevTokens,
  baseUrl: string,
  demoCustomerId?: string,
  devIssuer?: string,
  webAppUrl?: string,
  staffIssuer?: string,
): string {
  const line = '='.repeat(78);
  return [
    '',
    line,
    '  DEVELOPMENT CLIENT TOKENS (first start, embedded defaults; shown only this once)',
    line,
    `  partner  ${tokens.partner}`,
    `  admin    ${tokens.admin}`,
    '',
    `  curl -H "Authorization: Bearer ${tokens.partner}" ${baseUrl}/api/v1/me`,
    ...(demoCustomerId
      ? [`  Demo customer: ${demoCustomerId}`, `  curl -H "Authorization: Bearer ${tokens.partner}" ${baseUrl}/api/v1/customers/${demoCustomerId}/balance`]
      : []),
    `  Swagger UI: ${baseUrl}/docs  (Authorize → bearer: the partner token for customers and accounts, the admin token for audit events)`,
    '  More tokens: npm run clients -- create --name NAME --role partner|admin',
    ...(devIssuer
      ? [
          '',
          `  End users (development OpenID provider at ${devIssuer}): demo and alex, password = the name.`,
          '  An end-user access token, in one command (the demo customer is demo’s):',
          '    TOKEN=$(npm run -s users -- token --user demo)',
          `    curl -H "Authorization: Bearer $TOKEN" ${baseUrl}/api/v1/me`,
        ]
      : []),
    ...(staffIssuer
      ? [
          '',
          `  Staff (development staff provider at ${staffIssuer}): sam (support), casey (compliance), oli (operator),`,
          '  pat (every role, no second factor); password = the name. A staff token for Swagger UI (Authorize → staff) or curl;',
          '  every search says why (reason, a ticket id):',
          '    STAFF=$(npm run -s users -- token --staff --user sam)',
          `    curl -H "Authorization: Bearer $STAFF" "${baseUrl}/api/v1/audit-events?limit=5&reason=SUP-1234"`,
        ]
      : []),
    ...(webAppUrl ? ['', `  A web app with the gateway's browser session (no token in the browser): ${webAppUrl}  (log in as demo / demo)`] : []),
    line,
    '',
  ].join('\n');
}
