import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { CliIo } from '../../src/database/cli/command-line';
import { ConfigurationError, validateEnvironment } from '../../src/config/load-config';
import { devLogin } from '../identity-provider/dev-login';
import { DEV_CLIENTS, DEV_STAFF_SCOPE } from '../identity-provider/dev-identity-provider';
import { dpopProofWith, DpopPrivateJwk, newDpopKey } from '../identity-provider/dev-dpop';
import { PARTNER_SCOPES } from '../../src/partner-api/domain/partner-api.vocabulary';
import { DevelopmentEnvironment } from '../development.environment';

const USAGE = `Usage: npm run -s users -- <command> [options]

  token --user NAME [--password-stdin] [--scope "S1 S2"] [--json] [--dpop] [--out FILE] [--staff]
         Logs NAME in at the OpenID provider as a native app does (authorization code + PKCE) and
         prints their access token for the gateway (all of its scopes unless --scope says which).
         The provider is OIDC_ISSUER, or the development one that \`npm start\` runs in sandbox mode
         (users demo and alex; the password is the name). --json prints the token endpoint's whole answer.
         The password: with --password-stdin, standard input up to its end (one trailing newline
         dropped), e.g. \`npm run -s users -- token --user NAME --password-stdin < file\`; else the
         environment variable USER_PASSWORD; else the user's name (the development users' password).
         Never on the command line, where every user of the machine reads it (ps): --password is refused.
         --dpop: the token is bound to a new key (DPoP, RFC 9449): prints one JSON line with the token
         (access_token, token_type "DPoP") and the key to sign proofs with (dpop_key, a private JWK).
         The gateway refuses that token without a proof of the key.
         --out FILE: writes what would be printed to FILE instead, readable by its owner only (0600):
         where \`proof\` reads the key, e.g. \`token --user demo --dpop --out .data/demo-dpop.json\`.
         --staff: a staff member's token instead, from the company's provider: STAFF_OIDC_ISSUER (its
         client STAFF_OIDC_CLIENT_ID), or the development staff provider \`npm start\` runs in sandbox
         mode: sam (support), casey (compliance), oli (operator), each with a second factor, and pat
         (every role, password only); the password is the name. Paste it into Swagger UI's Authorize
         (bearerAuth), or send it as \`Authorization: Bearer <token>\`.

  proof --key FILE --method METHOD --url URL
         Prints a DPoP proof for one request, signed with the key in FILE (what \`token --dpop\` printed),
         bound to its access token: send it as the DPoP header with \`Authorization: DPoP <access_token>\`.
         A proof is good for one request: make one per call.
`;

/** Standard input up to its end: where --password-stdin reads the password. */
async function readStandardInput(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Runs the users CLI (end users of the partner's OpenID provider); returns the exit code. */
export async function runUsersCli(
  argv: string[],
  env: NodeJS.ProcessEnv,
  io: CliIo,
  standardInput: () => Promise<string> = readStandardInput,
): Promise<number> {
  const [name = '', ...args] = argv;
  if (name === 'help' || name === '--help' || name === '-h') {
    io.out(USAGE);
    return 0;
  }
  if (name === 'proof') return proof(args, io);
  if (name !== 'token') {
    io.err(`${name ? `Unknown command '${name}'` : 'A command is required'}\n\n${USAGE}`);
    return 2;
  }
  let values: { user?: string; password?: string; 'password-stdin'?: boolean; scope?: string; json?: boolean; dpop?: boolean; out?: string; staff?: boolean };
  try {
    ({ values } = parseArgs({
      args,
      options: {
        user: { type: 'string' },
        // Parsed only to be refused with the reason: an unknown option would not say it.
        password: { type: 'string' },
        'password-stdin': { type: 'boolean' },
        scope: { type: 'string' },
        json: { type: 'boolean' },
        dpop: { type: 'boolean' },
        out: { type: 'string' },
        staff: { type: 'boolean' },
      },
      strict: true,
    }));
  } catch (error) {
    io.err(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (!values.user) {
    io.err(`--user is required\n\n${USAGE}`);
    return 2;
  }
  if (values.password !== undefined) {
    io.err(`--password is refused: every user of the machine reads a command line (ps). Send the password with --password-stdin or USER_PASSWORD.\n\n${USAGE}`);
    return 2;
  }
  let password: string | undefined;
  if (values['password-stdin']) {
    password = (await standardInput()).replace(/\r?\n$/, '');
    if (password === '') {
      io.err('--password-stdin read no password from standard input');
      return 2;
    }
  } else if (env.USER_PASSWORD) {
    password = env.USER_PASSWORD;
  }
  let config;
  try {
    config = validateEnvironment(env, { also: [DevelopmentEnvironment] });
  } catch (error) {
    if (error instanceof ConfigurationError) {
      io.err(error.message);
      return 1;
    }
    throw error;
  }
  if (values.staff && values.dpop) {
    io.err(`--staff and --dpop: staff tokens are bearer tokens (Swagger UI sends them)\n\n${USAGE}`);
    return 2;
  }
  const issuer = values.staff
    ? (config.STAFF_OIDC_ISSUER ?? `http://127.0.0.1:${config.DEV_STAFF_OIDC_PORT}`)
    : (config.OIDC_ISSUER ?? `http://127.0.0.1:${config.DEV_OIDC_PORT}`);
  /** Tokens and keys on stdout, or in --out's file, which only its owner reads (an existing one too). */
  const give = (text: string) => {
    if (values.out === undefined) return io.out(text);
    writeFileSync(values.out, `${text}\n`, { mode: 0o600 });
    chmodSync(values.out, 0o600);
    io.err(`Written to ${values.out} (mode 600)`);
  };
  const scopes = values.scope === undefined ? (values.staff ? [DEV_STAFF_SCOPE] : PARTNER_SCOPES) : values.scope.split(' ').filter((scope) => scope !== '');
  try {
    if (values.dpop) {
      const key = await newDpopKey();
      const tokens = await devLogin({
        issuer,
        user: values.user,
        password,
        audience: config.OIDC_AUDIENCE,
        scopes,
        dpop: (method, url) => dpopProofWith(key, { method, url }),
      });
      if (tokens.token_type.toLowerCase() !== 'dpop') {
        io.err(`The OpenID provider at ${issuer} did not bind the token to the key (token_type ${tokens.token_type}): it does not support DPoP`);
        return 1;
      }
      give(JSON.stringify({ ...(values.json ? tokens : { access_token: tokens.access_token, token_type: tokens.token_type }), dpop_key: key }));
      return 0;
    }
    const tokens = await devLogin(
      values.staff
        ? { issuer, user: values.user, password, audience: config.STAFF_OIDC_AUDIENCE, scopes, clientId: config.STAFF_OIDC_CLIENT_ID ?? DEV_CLIENTS.staff }
        : { issuer, user: values.user, password, audience: config.OIDC_AUDIENCE, scopes },
    );
    give(values.json ? JSON.stringify(tokens) : tokens.access_token);
    return 0;
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause;
    io.err(
      cause?.code === 'ECONNREFUSED'
        ? `No OpenID provider answers at ${issuer}: is the service running in sandbox mode (npm start)?`
        : `${(error as Error).message}`,
    );
    return 1;
  }
}

/** `users proof`: a DPoP proof for one request, with the key (and its token) that `token --dpop` printed into FILE. */
async function proof(args: string[], io: CliIo): Promise<number> {
  let values: { key?: string; method?: string; url?: string };
  try {
    ({ values } = parseArgs({ args, options: { key: { type: 'string' }, method: { type: 'string' }, url: { type: 'string' } }, strict: true }));
  } catch (error) {
    io.err(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const missing = (['key', 'method', 'url'] as const).filter((option) => !values[option]);
  if (missing.length > 0) {
    io.err(`${missing.map((option) => `--${option}`).join(', ')} required\n\n${USAGE}`);
    return 2;
  }
  if (!URL.canParse(values.url!)) {
    io.err(`--url must be the request's whole URL (http://…), as the gateway sees it: '${values.url}' is not one`);
    return 2;
  }
  let saved: { access_token?: unknown; dpop_key?: Partial<DpopPrivateJwk> };
  try {
    saved = JSON.parse(readFileSync(values.key!, 'utf8')) as typeof saved;
  } catch (error) {
    io.err(`--key ${values.key}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : 'not the JSON line `token --dpop` printed'}`);
    return 1;
  }
  const key = saved.dpop_key;
  if (!key || key.kty !== 'EC' || key.crv !== 'P-256' || typeof key.d !== 'string') {
    io.err(`--key ${values.key}: no dpop_key (an EC P-256 private JWK) in it: keep what \`token --dpop\` printed`);
    return 1;
  }
  const accessToken = typeof saved.access_token === 'string' ? saved.access_token : undefined;
  io.out(await dpopProofWith(key as DpopPrivateJwk, { method: values.method!.toUpperCase(), url: values.url!, accessToken }));
  return 0;
}
