import { registerHooks } from 'node:module';

/**
 * What three dependencies build as they load and a gateway never uses, left unbuilt: 10–11 MiB of a
 * gateway's idle resident memory (docs/benchmarks.md, "What loading costs: Nest's date formatters
 * and TypeORM's other drivers", and "class-validator's phone numbers"). Registered first by the
 * service's entry points, before anything requires them. Each is one change to one file's text as
 * it loads; no module is stood in for, so whatever else requires a package (or wraps `require`, as
 * the tracing SDK's instrumentations do) gets the package itself.
 *
 * - `@nestjs/common` makes two `Intl.DateTimeFormat`s when its logger modules load, for the
 *   timestamps of Nest's own console logger, which the gateway replaces with its JSON log. Making
 *   one reads ICU's locale, calendar and time-zone data: in a bare `node`, 5 MiB of the binary's
 *   data pages, 3.6 MiB of its code and 2.8 MiB of memory made resident, for the life of the
 *   process. Here each is made when it first formats a timestamp, which Nest's console logger
 *   still does as before.
 * - TypeORM's driver factory requires the drivers of 17 databases (TypeORM's 36 modules of
 *   theirs), whichever one the data source names. The service runs on PostgreSQL only. Here each of
 *   the 16 others, named below, is required when the factory first makes one.
 * - class-validator's `isPhoneNumber` requires libphonenumber-js with its largest metadata (73
 *   modules; in a bare `node`, 1.5 MiB of heap and 2.3 MiB resident) whichever rules a service
 *   uses. The gateway checks phone numbers with its own rule (`IsPhoneNumber` in
 *   common/http/field-rules.ts). Here libphonenumber-js loads when `isPhoneNumber` first parses.
 *
 * Each change is made only where what it changes is exactly as named here: TypeORM's factory and
 * class-validator's rule, found by their paths in the packages, that require what is named once
 * each and use what they require nowhere but in `new binding.Export(` or `(0, binding.Export)(`
 * (the two calls TypeScript's CommonJS output makes), `Export` being the named export; a file of
 * Nest's, found by its path, that makes its formatter with the text below and uses it for `format`
 * alone. A release of any of them that changes these is loaded as published. The process test
 * `trimmed-dependencies` then fails, and this module is brought up to date.
 */
export const TRIMMED = {
  /** The module that requires every driver, and the drivers it requires when it first makes one: all its drivers but PostgreSQL's. */
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

/** A formatter made when it first formats: the only method Nest's loggers call on theirs. */
const LAZY_FORMATTER = `const dateTimeFormatter = ((locales, options) => {
  let made;
  return { format: (date) => (made ??= new Intl.DateTimeFormat(locales, options)).format(date) };
})(`;

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
 * A CommonJS module's text with each `const binding = require("specifier");` named made lazy: the
 * `require` runs when the binding's export is first read. Undefined where the text is not as named:
 * for each, it names the specifier once, in one such `const`, and names the binding nowhere else but
 * in `new binding.read(` or `(0, binding.read)(`, the two calls TypeScript's CommonJS output makes
 * of an imported class and function. Those neither write the export nor call it with the module
 * as `this`, so the lazy object, which has the one export and no other, serves them as the module
 * did. The module's own `require` still loads the specifier, as published, when first read.
 */
function withLazyRequires(text: string, requires: ReadonlyArray<{ specifier: string; read: string }>): string | undefined {
  let lazy = text;
  for (const { specifier, read } of requires) {
    if (text.split(specifier).length !== 2) return undefined;
    const required = new RegExp(`const (\\w+) = require\\("${escaped(specifier)}"\\);`).exec(text);
    if (required === null) return undefined;
    const binding = required[1];
    const named = text.split(new RegExp(`(?<![\\w$])${binding}(?![\\w$])`)).length - 1;
    const used = text.split(`new ${binding}.${read}(`).length - 1 + (text.split(`(0, ${binding}.${read})(`).length - 1);
    // Named once where it is required, and otherwise only in those two calls.
    if (used < 1 || named !== used + 1) return undefined;
    lazy = lazy.replace(
      required[0],
      `const ${binding} = ((load) => { let loaded; return { get ${read}() { return (loaded ??= load()).${read}; } }; })(() => require(${JSON.stringify(specifier)}));`,
    );
  }
  return lazy;
}

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** TypeORM's driver factory with each driver but PostgreSQL's required when it first makes one, or undefined where it is not as named above. */
export function withLazyDrivers(text: string): string | undefined {
  return withLazyRequires(
    text,
    TRIMMED.drivers.map((specifier) => ({ specifier, read: specifier.slice(specifier.lastIndexOf('/') + 1) })),
  );
}

/** class-validator's phone rule with libphonenumber-js required when the rule first parses, or undefined where it is not as named above. */
export function withLazyPhoneParser(text: string): string | undefined {
  return withLazyRequires(text, [{ specifier: TRIMMED.phoneParser, read: TRIMMED.phoneParserRead }]);
}

const REWRITES: ReadonlyArray<readonly [path: string, rewrite: (text: string) => string | undefined]> = [
  [TRIMMED.driverFactory, withLazyDrivers],
  [TRIMMED.phoneRule, withLazyPhoneParser],
  ...TRIMMED.nestLoggers.map((path) => [path, withLazyFormatter] as const),
];

registerHooks({
  load(url, context, nextLoad) {
    const loaded = nextLoad(url, context);
    const rewrite = REWRITES.find(([path]) => url.endsWith(path))?.[1];
    if (rewrite === undefined) return loaded;
    const text = sourceText(loaded.source);
    const lazy = text === undefined ? undefined : rewrite(text);
    return lazy === undefined ? loaded : { ...loaded, source: lazy };
  },
});
