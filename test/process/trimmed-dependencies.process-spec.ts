import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanEnv, runProcess } from '../support/processes';

const TRIMS = join(process.cwd(), 'dist', 'src', 'common', 'runtime', 'trimmed-dependencies.js');
const TRACING = join(process.cwd(), 'dist', 'src', 'common', 'runtime', 'start-tracing.js');
const MAIN = join(process.cwd(), 'dist', 'src', 'main.js');

/** What both probes read from the module cache: TypeORM's driver modules, and libphonenumber-js's files. */
const LOADED = `
const driversLoaded = () => Object.keys(require.cache).filter((file) => /[/]typeorm[/]driver[/][^/]+[/][^/]+Driver[.]js$/.test(file)).map((file) => file.split('/typeorm/driver/')[1]);
const phoneModulesLoaded = () => Object.keys(require.cache).filter((file) => file.startsWith('/') && file.includes('/node_modules/libphonenumber-js/')).length;
`;

/**
 * Required before the service's entry point: counts the date formatters made from then on, and, as
 * the process exits, prints them, the TypeORM drivers loaded, and whether class-validator's phone
 * rule and how many of libphonenumber-js's modules were loaded.
 */
const WATCH = `${LOADED}
let made = 0;
Intl.DateTimeFormat = new Proxy(Intl.DateTimeFormat, { construct: (target, args, newTarget) => (made++, Reflect.construct(target, args, newTarget)) });
process.on('exit', () => {
  const drivers = driversLoaded();
  const phoneModules = phoneModulesLoaded();
  // The service has loaded the trims by now; their module names the rule's file.
  const { phoneRule: ruleFile } = require(${JSON.stringify(TRIMS)}).TRIMMED;
  const phoneRule = Object.keys(require.cache).some((file) => file.endsWith(ruleFile));
  process.stderr.write('\\nloaded: ' + JSON.stringify({ made, drivers, phoneRule, phoneModules }) + '\\n');
});
`;

/**
 * A Node process that loads @nestjs/common, TypeORM and class-validator as the service does, with the
 * trims registered first (as src/main.ts and dev/main.ts do) or without them, and reports what
 * loading made: the date formatters, TypeORM's driver modules, libphonenumber-js's modules, and what
 * the formatters, drivers and class-validator's phone check still do.
 */
const PROBE = `${LOADED}
const trimmed = process.argv[1] !== 'as published';
const trims = trimmed ? require(${JSON.stringify(TRIMS)}) : null;
// As src/main.ts does with tracing on: the SDK's instrumentations wrap require after the trims.
const tracing = process.argv[1] === 'trimmed, traced' ? require(${JSON.stringify(TRACING)}).startTracing() : undefined;
const Made = Intl.DateTimeFormat;
let made = 0;
Intl.DateTimeFormat = new Proxy(Made, { construct: (target, args, newTarget) => (made++, Reflect.construct(target, args, newTarget)) });
const { ConsoleLogger, Logger } = require('@nestjs/common');
const madeAtLoad = made;
const { DataSource } = require('typeorm');
const drivers = driversLoaded().sort();
const options = { year: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric', day: '2-digit', month: '2-digit' };
const day = () => new Made(undefined, options).format(Date.now()).split(',')[0];
const days = [day()];
const stamps = [new ConsoleLogger('probe').getTimestamp(), Logger.getTimestamp(), new ConsoleLogger('probe').getTimestamp()];
days.push(day());
const postgres = new DataSource({ type: 'postgres', url: 'postgres://probe@127.0.0.1:1/probe' }).driver.constructor.name;
// Another database's driver, required from outside TypeORM's factory before the factory makes one: TypeORM's own class.
const driverElsewhere = typeof require('typeorm/driver/oracle/OracleDriver').OracleDriver.prototype.escape;
let refusal = null;
try { new DataSource({ type: 'mysql' }); } catch (error) { refusal = error.constructor.name + ': ' + error.message; }
const driversAfterRefusal = driversLoaded().sort();
const { isPhoneNumber } = require('class-validator');
const phoneModulesAtLoad = phoneModulesLoaded();
const phoneChecks = ['+4915123456789', '+14155552671', '+49 151', '+999123456789', 'not a number'].map((text) => isPhoneNumber(text));
const phoneModulesAfterChecks = phoneModulesLoaded();
const phonePackage = Object.keys(require('libphonenumber-js/max')).length;
const fs = require('node:fs');
const packaged = (path) => fs.readFileSync(process.cwd() + path, 'utf8');
const factory = packaged('/node_modules/typeorm/driver/DriverFactory.js');
const rule = trimmed ? packaged(trims.TRIMMED.phoneRule) : '';
const published = trimmed ? {
  listed: trims.TRIMMED.drivers,
  required: [...factory.matchAll(/require[(]"([.][/][^"]+)"[)]/g)].map((match) => match[1]).filter((specifier) => specifier.endsWith('Driver')),
  factory: [
    factory,
    factory.replace('new MysqlDriver_1.MysqlDriver(', 'new MysqlDriver_1.default('),
    factory.replace('return new OracleDriver_1.OracleDriver(', 'return new (Object.values(OracleDriver_1)[0])('),
    factory + ';exports.drivers = [require("./sap/SapDriver")];',
    factory + ';exports.sap = { ...SapDriver_1 };',
    factory + ';MysqlDriver_1.MysqlDriver = class {};',
  ].map((text) => trims.withLazyDrivers(text) !== undefined),
  nestAsNamed: trims.TRIMMED.nestLoggers.map((path) => trims.withLazyFormatter(packaged(path)) !== undefined),
  phoneRule: [
    rule,
    rule.replace('max_1.parsePhoneNumber)(', 'max_1.parsePhoneNumberWithError)('),
    rule.replace('(0, max_1.parsePhoneNumber)(', 'max_1.default('),
    rule.replace('return phoneNumber.isValid();', 'return require("libphonenumber-js/max").isValidPhoneNumber(value);'),
    rule.replace('(0, max_1.parsePhoneNumber)(', 'max_1.parsePhoneNumber('),
  ].map((text) => trims.withLazyPhoneParser(text) !== undefined),
} : null;
console.log(JSON.stringify({ traced: tracing !== undefined, madeAtLoad, drivers, days, stamps, madeAfterStamps: made - madeAtLoad, postgres, driverElsewhere, refusal, driversAfterRefusal, phoneModulesAtLoad, phoneChecks, phoneModulesAfterChecks, phonePackage, published }));
if (tracing) tracing.shutdown().then(() => process.exit(0));
`;

async function probe(mode: 'trimmed' | 'trimmed, traced' | 'as published') {
  // Traced: an exporter that no collector answers (the probe sends nothing before it exits).
  const env: Record<string, string> = mode === 'trimmed, traced' ? { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' } : {};
  const result = await runProcess(['-e', PROBE], [mode], cleanEnv(env));
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout.trim().split('\n').pop()!) as {
    traced: boolean;
    madeAtLoad: number;
    drivers: string[];
    days: string[];
    stamps: string[];
    madeAfterStamps: number;
    postgres: string;
    driverElsewhere: string;
    refusal: string | null;
    driversAfterRefusal: string[];
    phoneModulesAtLoad: number;
    phoneChecks: boolean[];
    phoneModulesAfterChecks: number;
    phonePackage: number;
    published: { listed: string[]; required: string[]; factory: boolean[]; nestAsNamed: boolean[]; phoneRule: boolean[] } | null;
  };
}

describe('the service loads three dependencies without what it never uses (src/common/runtime/trimmed-dependencies.ts)', () => {
  it('when @nestjs/common, TypeORM and class-validator load as published, then they make two date formatters, every driver and libphonenumber-js: what the trims remove, so a release that changes any is seen here', async () => {
    const loaded = await probe('as published');

    expect(loaded.madeAtLoad).toBe(2);
    expect(loaded.drivers).toEqual(
      expect.arrayContaining(['mysql/MysqlDriver.js', 'oracle/OracleDriver.js', 'postgres/PostgresDriver.js', 'sqlserver/SqlServerDriver.js']),
    );
    expect(loaded.drivers.length).toBeGreaterThan(15);
    expect(loaded.phoneModulesAtLoad).toBeGreaterThan(50);
  });

  it('when the packages are as published, then the trims name every driver TypeORM’s factory requires but PostgreSQL’s, and Nest’s two files and class-validator’s phone rule are as the trims expect', async () => {
    const { published } = await probe('trimmed');

    expect([...published!.required].sort()).toEqual([...published!.listed, './postgres/PostgresDriver'].sort());
    // As published it makes each driver's class alone; another export read, the module read whole, required a second time, spread or written to is not as named.
    expect(published!.factory).toEqual([true, false, false, false, false, false]);
    expect(published!.nestAsNamed).toEqual([true, true]);
    // As published it calls the named export alone; another export, the module read whole, required a second time, or the export called as the module's method is not as named.
    expect(published!.phoneRule).toEqual([true, false, false, false, false]);
  });

  it.each(['trimmed', 'trimmed, traced'] as const)(
    'when class-validator loads after the trims (%s), then libphonenumber-js loads only when its phone check first parses, the check answers as published, and the package is itself to anything else that requires it',
    async (mode) => {
      const [trimmed, published] = await Promise.all([probe(mode), probe('as published')]);

      // The traced probe runs with the tracing SDK started, as src/main.ts does with an endpoint set.
      expect(trimmed.traced).toBe(mode === 'trimmed, traced');
      expect(trimmed.phoneModulesAtLoad).toBe(0);
      expect(trimmed.phoneChecks).toEqual([true, true, false, false, false]);
      expect(trimmed.phoneChecks).toEqual(published.phoneChecks);
      expect(trimmed.phoneModulesAfterChecks).toBe(published.phoneModulesAtLoad);
      expect(trimmed.phonePackage).toBe(published.phonePackage);
      expect(published.phonePackage).toBeGreaterThan(20);
    },
  );

  it('when they load after the trims, then no formatter is made and PostgreSQL is the only driver loaded', async () => {
    const loaded = await probe('trimmed');

    expect(loaded.madeAtLoad).toBe(0);
    expect(loaded.drivers).toEqual(['postgres/PostgresDriver.js']);
  });

  it("when Nest's loggers stamp a line after the trims, then each formatter is made once, on its first stamp, and stamps the date as before", async () => {
    const loaded = await probe('trimmed');

    expect(loaded.madeAfterStamps).toBe(2);
    for (const stamp of loaded.stamps) expect(loaded.days).toContain(stamp.split(',')[0]);
    expect(loaded.stamps[0]).toMatch(/\d{1,2}:\d{2}:\d{2}/);
  });

  it.each(['trimmed', 'trimmed, traced'] as const)(
    'when a data source names PostgreSQL after the trims (%s), then TypeORM makes its driver; when it names another database, then that driver loads then and TypeORM answers as published; a driver required from elsewhere is TypeORM’s own',
    async (mode) => {
      const [trimmed, published] = await Promise.all([probe(mode), probe('as published')]);

      expect(trimmed.traced).toBe(mode === 'trimmed, traced');
      expect(trimmed.postgres).toBe('PostgresDriver');
      expect(trimmed.refusal).toBe(published.refusal);
      expect(trimmed.refusal).toMatch(/^DriverPackageNotInstalledError: Mysql package has not been found installed/);
      expect(trimmed.driversAfterRefusal).toEqual(['mysql/MysqlDriver.js', 'oracle/OracleDriver.js', 'postgres/PostgresDriver.js']);
      expect(trimmed.driverElsewhere).toBe('function');
    },
  );

  it.each([
    ['src/main.js', './common/runtime/trimmed-dependencies'],
    ['dev/main.js', '../src/common/runtime/trimmed-dependencies'],
  ])('when the built %s starts, then the first module it requires is the trims', (entry, trims) => {
    const built = readFileSync(join(process.cwd(), 'dist', entry), 'utf8');

    expect(/require\("([^"]+)"\)/.exec(built)?.[1]).toBe(trims);
  });

  it('when the built service starts, then by the time it reads its configuration it has loaded Nest, TypeORM and class-validator’s phone rule with no formatter made, only PostgreSQL’s driver and none of libphonenumber-js', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pgw-trims-'));
    try {
      const watch = join(dir, 'watch.cjs');
      writeFileSync(watch, WATCH);
      // Without a provider or a database it stops at its configuration, after its modules have loaded.
      const result = await runProcess(['--require', watch, MAIN], [], cleanEnv({ DATA_DIR: dir }));

      expect(result.code).toBe(1);
      expect(result.stderr).toContain('Invalid configuration');
      const loaded = JSON.parse(/loaded: (.*)/.exec(result.stderr)![1]) as { made: number; drivers: string[]; phoneRule: boolean; phoneModules: number };
      expect(loaded).toEqual({ made: 0, drivers: ['postgres/PostgresDriver.js'], phoneRule: true, phoneModules: 0 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
