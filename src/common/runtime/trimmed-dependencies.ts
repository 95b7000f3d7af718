import { registerHooks } from 'node:module';
import { posix } from 'node:path';

/**
 * What three dependencies build as they load and a gateway never uses, left unbuilt: 10–11 MiB of a
 * gateway's idle resident memory (docs/benchmarks.md, "What loading costs: Nest's date formatters
 * and TypeORM's other drivers", and "class-validator's phone numbers"). Registered first by the
 * service's entry points, before anything requires them.
 *
 * - `@nestjs/common` makes two `Intl.DateTimeFormat`s when its logger modules load, for the
 *   timestamps of Nest's own console logger, which the gateway replaces with its JSON log. Making
 *   one reads ICU's locale, calendar and time-zone data: in a bare `node`, 5 MiB of the binary's
 *   data pages, 3.6 MiB of its code and 2.8 MiB of memory made resident, for the life of the
 *   process. Here each is made when it first formats a timestamp, which Nest's console logger
 *   still does as before.
 * - TypeORM's driver factory requires the drivers of 17 databases (TypeORM's 36 modules of
 *   theirs), whichever one the data source names. The service runs on PostgreSQL only: the 16
 *   others, named below, resolve to a module whose driver refuses, by name, to be made.
 * - class-validator's `isPhoneNumber` requires libphonenumber-js with its largest metadata (73
 *   modules; in a bare `node`, 1.5 MiB of heap and 2.3 MiB resident) whichever rules a service
 *   uses. The gateway checks phone numbers with its own rule (`IsPhoneNumber` in
 *   common/http/field-rules.ts). Here libphonenumber-js loads when `isPhoneNumber` first parses.
 *
 * Each change is made only where what it changes is exactly as named here: a driver on the list,
 * required by TypeORM's factory; a file of Nest's, found by its path in the package, that makes its
 * formatter with the text below and uses it for `format` alone; class-validator's file, found by its
 * path, that reads only the named export of libphonenumber-js. A release of any of them that
 * changes these is loaded as published. The process test `trimmed-dependencies` then fails, and
 * this module is brought up to date.
 */
export const TRIMMED = {
  /** The module whose drivers are trimmed, and the drivers trimmed: all its drivers but PostgreSQL's. */
  driverFactory: '/node_modules/typeorm/driver/DriverFactory.js',
  drivers: [
    './aurora-mysql/AuroraMysqlDriver',
    './aurora-postgres/AuroraPostgresDriver',
    './better-sqlite3/BetterSqlite3Driver',
    './capacitor/CapacitorDriver',
    './cockroachdb/CockroachDriver',
    './cordova/CordovaDriver',
    './expo/ExpoDriver',
    './mongodb/MongoDriver',
    './mysql/MysqlDriver',
    './nativescript/NativescriptDriver',
    './oracle/OracleDriver',
    './react-native/ReactNativeDriver',
    './sap/SapDriver',
    './spanner/SpannerDriver',
    './sqljs/SqljsDriver',
    './sqlserver/SqlServerDriver',
  ],
  /** Nest's modules that make a formatter as they load, the text that makes it, and its one use. */
  nestLoggers: ['/node_modules/@nestjs/common/services/console-logger.service.js', '/node_modules/@nestjs/common/services/logger.service.js'],
  formatterMade: 'const dateTimeFormatter = new Intl.DateTimeFormat(',
  formatterUsed: 'dateTimeFormatter.format(',
  /** class-validator's module that requires libphonenumber-js as it loads, what it requires, and the one export it reads. */
  phoneRule: '/node_modules/class-validator/cjs/decorator/string/IsPhoneNumber.js',
  phoneParser: 'libphonenumber-js/max',
  phoneParserRead: 'parsePhoneNumber',
} as const;

const TRIMMED_DRIVERS: ReadonlySet<string> = new Set(TRIMMED.drivers);
const TRIMMED_DRIVER = 'gateway-trimmed:typeorm-driver/';

/** A formatter made when it first formats: the only method Nest's loggers call on theirs. */
const LAZY_FORMATTER = `const dateTimeFormatter = ((locales, options) => {
  let made;
  return { format: (date) => (made ??= new Intl.DateTimeFormat(locales, options)).format(date) };
})(`;

/** A driver module as TypeORM's factory reads it: its driver, which refuses to be made. */
function trimmedDriverSource(specifier: string): string {
  const message = `The gateway runs on PostgreSQL only: TypeORM's driver ${specifier} is not loaded`;
  return `exports.${posix.basename(specifier)} = class { constructor() { throw new Error(${JSON.stringify(message)}); } };`;
}

function sourceText(source: unknown): string | undefined {
  if (typeof source === 'string') return source;
  if (source instanceof Uint8Array) return Buffer.from(source.buffer, source.byteOffset, source.byteLength).toString('utf8');
  return undefined;
}

/** Nest's logger module with its formatter made on first use, or undefined where it is not as named above. */
export function withLazyFormatter(text: string): string | undefined {
  const made = text.split(TRIMMED.formatterMade).length - 1;
  const named = text.split('dateTimeFormatter').length - 1;
  const used = text.split(TRIMMED.formatterUsed).length - 1;
  if (made !== 1 || used < 1 || named !== made + used) return undefined;
  return text.replace(TRIMMED.formatterMade, LAZY_FORMATTER);
}

/**
 * class-validator's phone rule with libphonenumber-js required when the rule first reads its parser,
 * or undefined where the rule is not as named above: it names the package once, in one
 * `const binding = require("libphonenumber-js/max");`, and reads nothing of it but
 * `binding.parsePhoneNumber`. The rule's own `require` still loads the package, as published, when
 * first read; the package's module is never stood in for, so anything else that requires it (or
 * wraps `require`, as the tracing SDK's instrumentations do) gets the package itself.
 */
export function withLazyPhoneParser(text: string): string | undefined {
  if (text.split('libphonenumber-js').length !== 2) return undefined;
  const required = new RegExp(`const (\\w+) = require\\("${TRIMMED.phoneParser}"\\);`).exec(text);
  if (required === null) return undefined;
  const binding = required[1];
  const reads = [...text.matchAll(new RegExp(`(?<![\\w$.])${binding}(?![\\w$])(\\.\\w+)?`, 'g'))].map((match) => match[1]);
  // Named once where it is required, and otherwise only as `binding.parsePhoneNumber`.
  if (reads.length < 2 || reads.filter((read) => read !== `.${TRIMMED.phoneParserRead}`).length !== 1) return undefined;
  const read = TRIMMED.phoneParserRead;
  return text.replace(
    required[0],
    `const ${binding} = ((load) => { let loaded; return { get ${read}() { return (loaded ??= load()).${read}; } }; })(() => require("${TRIMMED.phoneParser}"));`,
  );
}

registerHooks({
  resolve(specifier, context, nextResolve) {
    if (TRIMMED_DRIVERS.has(specifier) && context.parentURL?.endsWith(TRIMMED.driverFactory)) {
      return { url: TRIMMED_DRIVER + specifier.slice(2), format: 'commonjs', shortCircuit: true };
    }
    return nextResolve(specifier, context);
  },
  load(url, context, nextLoad) {
    if (url.startsWith(TRIMMED_DRIVER)) {
      return { format: 'commonjs', source: trimmedDriverSource(url.slice(TRIMMED_DRIVER.length)), shortCircuit: true };
    }
    const loaded = nextLoad(url, context);
    const rewrite = url.endsWith(TRIMMED.phoneRule)
      ? withLazyPhoneParser
      : TRIMMED.nestLoggers.some((path) => url.endsWith(path))
        ? withLazyFormatter
        : undefined;
    if (rewrite === undefined) return loaded;
    const text = sourceText(loaded.source);
    const lazy = text === undefined ? undefined : rewrite(text);
    return lazy === undefined ? loaded : { ...loaded, source: lazy };
  },
});
