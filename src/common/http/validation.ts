import { ArgumentMetadata, INestApplicationContext, Type, ValidationError, ValidationPipe } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { getMetadataStorage, IS_OPTIONAL, useContainer } from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata';
import { DomainError, FieldProblem } from '../domain/domain-error';
import { SPAN_ATTRIBUTES, traced } from '../telemetry/tracing';

export class RequestValidationFailed extends DomainError {
  constructor(fields: FieldProblem[], details?: string) {
    const summary = fields.map((f) => f.message).join('; ');
    super('REQUEST.VALIDATION_FAILED', {
      details: details ?? (summary || 'The request is invalid'),
      fields,
    });
  }

  /** A body that is JSON but not an object (a string, an array, null): there are no fields to name. */
  static notAnObject(): RequestValidationFailed {
    return new RequestValidationFailed([], 'The request body must be a JSON object, such as {"reference": "…"}');
  }
}

function collect(errors: ValidationError[], parent = ''): FieldProblem[] {
  return errors.flatMap((error) => {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) => ({
      field,
      message: message.replace(/^property (\S+) should not exist$/, `${field} is not an accepted field`),
    }));
    return [...own, ...collect(error.children ?? [], field)];
  });
}

/** A field a DTO declares, and whether it may be left out. */
interface DeclaredField {
  readonly name: string;
  readonly optional: boolean;
}

const declared = new WeakMap<Type, readonly DeclaredField[]>();

/**
 * The fields a DTO declares, as own names (never what its prototype chain happens to answer), in
 * the order the class declares them; `@IsOptional()` makes one optional.
 */
function declaredFieldsOf(type: Type): readonly DeclaredField[] {
  let fields = declared.get(type);
  if (!fields) {
    const byName = new Map<string, boolean>();
    for (const rule of getMetadataStorage().getTargetValidationMetadatas(type, '', true, false)) {
      byName.set(rule.propertyName, (byName.get(rule.propertyName) ?? false) || rule.name === IS_OPTIONAL);
    }
    fields = [...byName].map(([name, optional]) => ({ name, optional }));
    declared.set(type, fields);
  }
  return fields;
}

/** How a field is refused before its own rules run: missing, or null. */
export const requiredMessage = (field: string) => `${field} is required`;
export const nullMessage = (field: string) => `${field} must not be null: leave it out instead`;

/**
 * The strict reading of a body or a query, before the fields' own rules:
 * - every key must be a field the DTO declares (class-validator's whitelist looks a key up in a
 *   plain object, so `constructor`, `toString` or `__proto__` would pass as known);
 * - a required field must be there, and no field may be null (docs/field-rules.md): an optional
 *   field is given a value or left out, so that null never reaches the provider;
 * - then each field's rules run in the order written, and the first that fails is its one message.
 * Every field's problem is named at once, in the order the DTO declares its fields.
 */
class StrictValidationPipe extends ValidationPipe {
  override transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const type = metadata.metatype;
    if ((metadata.type !== 'body' && metadata.type !== 'query') || !type) return super.transform(value, metadata);
    return traced(
      'gateway.validate',
      { [SPAN_ATTRIBUTES.operation]: `validate ${metadata.type}`, 'gateway.schema': type.name },
      () => this.strictly(value, metadata, type),
      { failed: (error) => (error instanceof RequestValidationFailed ? 'rejected' : 'failed') },
    );
  }

  private async strictly(value: unknown, metadata: ArgumentMetadata, type: Type): Promise<unknown> {
    const fields = declaredFieldsOf(type);
    if (fields.length === 0) return super.transform(value, metadata);
    // No body at all where every field may be left out: the body is optional, and absent means none of them.
    if (value === undefined && metadata.type === 'body' && fields.every((field) => field.optional)) value = {};
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw RequestValidationFailed.notAnObject();
    const carried = value as Record<string, unknown>;
    const known = new Set(fields.map((field) => field.name));
    const problems: FieldProblem[] = Object.keys(carried)
      .filter((key) => !known.has(key))
      .map((key) => ({ field: key, message: `${key} is not an accepted field` }));
    const present: Record<string, unknown> = {};
    for (const { name, optional } of fields) {
      const given = Object.hasOwn(carried, name) ? carried[name] : undefined;
      if (given === undefined) {
        if (!optional) problems.push({ field: name, message: requiredMessage(name) });
      } else if (given === null) {
        problems.push({ field: name, message: optional ? nullMessage(name) : requiredMessage(name) });
      } else {
        present[name] = given;
      }
    }
    if (problems.length === 0) return super.transform(present, metadata);
    try {
      await super.transform(present, metadata);
    } catch (error) {
      if (!(error instanceof RequestValidationFailed)) throw error;
      // A field already named (missing, null) is named once: not again by its own rules.
      const named = new Set(problems.map((problem) => problem.field));
      problems.push(...(error.fields ?? []).filter((problem) => !named.has(problem.field)));
    }
    const order = new Map(fields.map((field, index) => [field.name, index]));
    throw new RequestValidationFailed(problems.sort((a, b) => (order.get(a.field) ?? -1) - (order.get(b.field) ?? -1)));
  }
}

/**
 * The one validation pipe: unknown fields are refused, and every bad field is named once, by the
 * first of its rules it fails (stopAtFirstError; a field's rules run in the order `Rules` lists them).
 */
export function createValidationPipe(): ValidationPipe {
  return new StrictValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    stopAtFirstError: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => new RequestValidationFailed(collect(errors)),
  });
}

/**
 * Constraints that need the Clock (the expiry rule, past dates) come from Nest's container;
 * class-validator's own come from its default container. Not `app` itself: the application logs
 * every failed lookup at error level, and most lookups are class-validator's own classes. Answers
 * are kept: a failed lookup throws, and validation asks for every constraint every time.
 */
export function resolveConstraintsFrom(app: INestApplicationContext): void {
  const moduleRef = app.get(ModuleRef);
  const known = new Map<Type, unknown>();
  useContainer(
    {
      get: (type: Type) => {
        if (!known.has(type)) {
          try {
            known.set(type, moduleRef.get<unknown, unknown>(type, { strict: false }));
          } catch {
            known.set(type, undefined);
          }
        }
        return known.get(type);
      },
    },
    { fallback: true },
  );
}

/** The two lookups class-validator's MetadataStorage makes for every object it validates. */
interface RuleLookups {
  getTargetValidationMetadatas(target: unknown, schema: string, always: boolean, strictGroups: boolean, groups?: string[]): ValidationMetadata[];
  groupByPropertyName(rules: ValidationMetadata[]): Record<string, ValidationMetadata[]>;
}

const remembering = Symbol('rules remembered');

/**
 * class-validator looks a DTO's rules up on every validation: it filters every rule it holds for
 * the class and its parents, then groups them by field, allocating both anew each time (1 % of the
 * gateway's CPU, and 2 KiB of garbage, per balance read). A class's rules are registered as its
 * decorators run, when the class is defined, before any request: so the answer for a class and
 * the same options never changes, and it is kept. Validation itself is class-validator's, as before.
 */
export function rememberValidationRules(): void {
  const storage = getMetadataStorage() as unknown as RuleLookups & { [remembering]?: true };
  if (storage[remembering]) return;
  storage[remembering] = true;
  const lookUp = storage.getTargetValidationMetadatas.bind(storage);
  const group = storage.groupByPropertyName.bind(storage);
  const rules = new Map<unknown, Map<string, ValidationMetadata[]>>();
  const grouped = new WeakMap<ValidationMetadata[], Record<string, ValidationMetadata[]>>();
  storage.getTargetValidationMetadatas = (target, schema, always, strictGroups, groups) => {
    const key = `${schema}\u0000${always}\u0000${strictGroups}\u0000${groups?.join('\u0000') ?? ''}`;
    let byOptions = rules.get(target);
    if (!byOptions) rules.set(target, (byOptions = new Map<string, ValidationMetadata[]>()));
    let found = byOptions.get(key);
    if (!found) byOptions.set(key, (found = lookUp(target, schema, always, strictGroups, groups)));
    return found;
  };
  storage.groupByPropertyName = (list) => {
    let byField = grouped.get(list);
    if (!byField) grouped.set(list, (byField = group(list)));
    return byField;
  };
}
