import { registerHooks } from 'node:module';

/**
 * What two dependencies build as they load and a gateway never uses, left unbuilt: about 9 MiB of
 * resident memory (docs/benchmarks.md, "What loading costs: Nest's date formatters and TypeORM's
 * other drivers"). Registered first by the service's entry points, before anything requires them.
 *
 * - `@nestjs/common` makes two `Intl.DateTimeFormat`s when its logger modules load, for the
 *   timestamps of Nest's own console logger, which the gateway replaces with its JSON log. Making
 *   one reads ICU's locale, calendar and time-zone data: 5 MiB of the Node binary's data pages, 3.6
 *   MiB of its code and 2.8 MiB of memory, resident for the life of the process. Here each is made
 *   when it first formats a timestamp, which Nest's console logger still does as before.
 * - TypeORM's driver factory requires the drivers of 17 databases (35 modules in all),
 *   whichever one the data source names. The service runs on PostgreSQL only: the others resolve to
 *   a module whose driver refuses, by name, to be made.
 *
 * Each change is made on text that must match exactly, in files found by their path in the package.
 * A release of either package that changes them is loaded as it comes, whole; the process test
 * `trimmed-dependencies` then fails, and this module is brought up to date.
 */
export const TRIMMED = {
  /** The module whose drivers are trimmed, and the one driver it keeps. */
  driverFactory: '/node_modules/typeorm/driver/DriverFactory.js',
  keptDriver: './postgres/PostgresDriver',
  /** Nest's modules that make a formatter as they load, and the text that makes it. */
  nestLoggers: ['/node_modules/@nestjs/common/services/console-logger.service.js', '/node_modules/@nestjs/common/services/logger.service.js'],
  formatterMade: 'const dateTimeFormatter = new Intl.DateTimeFormat(',
} as const;

const TRIMMED_DRIVER = 'gateway-trimmed:typeorm-driver/';

/** A formatter made when it first formats: the only method Nest's loggers call on theirs. */
const LAZY_FORMATTER = `const dateTimeFormatter = ((locales, options) => {
  let made;
  return { format: (date) => (made ??= new Intl.DateTimeFormat(locales, options)).format(date) };
})(`;

/** A driver module as TypeORM's factory reads it: each named export is a driver that refuses to be made. */
function trimmedDriverSource(specifier: string): string {
  return `module.exports = new Proxy({}, {
  get: (_, name) => name === '__esModule' ? undefined : class {
    constructor() { throw new Error(${JSON.stringify(`The gateway runs on PostgreSQL only: TypeORM's driver ${specifier} is not loaded`)}); }
  },
});`;
}

function sourceText(source: unknown): string | undefined {
  if (typeof source === 'string') return source;
  if (source instanceof Uint8Array) return Buffer.from(source.buffer, source.byteOffset, source.byteLength).toString('utf8');
  return undefined;
}

let registered = false;

/** Registers the two trims for this process's later requires and imports; once. */
export function trimDependencies(): void {
  if (registered) return;
  registered = true;
  registerHooks({
    resolve(specifier, context, nextResolve) {
      if (context.parentURL?.endsWith(TRIMMED.driverFactory) && specifier.startsWith('./') && specifier !== TRIMMED.keptDriver) {
        return { url: TRIMMED_DRIVER + specifier.slice(2), format: 'commonjs', shortCircuit: true };
      }
      return nextResolve(specifier, context);
    },
    load(url, context, nextLoad) {
      if (url.startsWith(TRIMMED_DRIVER)) {
        return { format: 'commonjs', source: trimmedDriverSource(url.slice(TRIMMED_DRIVER.length)), shortCircuit: true };
      }
      const loaded = nextLoad(url, context);
      if (!TRIMMED.nestLoggers.some((path) => url.endsWith(path))) return loaded;
      const text = sourceText(loaded.source);
      if (text === undefined || text.split(TRIMMED.formatterMade).length !== 2) return loaded;
      return { ...loaded, source: text.replace(TRIMMED.formatterMade, LAZY_FORMATTER) };
    },
  });
}

trimDependencies();
