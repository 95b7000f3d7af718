import { ArgumentMetadata, Type, ValidationError, ValidationPipe } from '@nestjs/common';
import { getMetadataStorage } from 'class-validator';
import { DomainError, FieldProblem } from '../domain/domain-error';

export class RequestValidationFailed extends DomainError {
  constructor(fields: FieldProblem[]) {
    const summary = fields.map((f) => f.message).join('; ');
    super('REQUEST.VALIDATION_FAILED', 'The request has invalid fields', {
      details: summary || 'The request is invalid',
      fields,
    });
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

const declared = new WeakMap<Type, ReadonlySet<string>>();

/** The fields a DTO declares, as own names (never what its prototype chain happens to answer). */
function declaredFieldsOf(type: Type): ReadonlySet<string> {
  let fields = declared.get(type);
  if (!fields) {
    fields = new Set(getMetadataStorage().getTargetValidationMetadatas(type, '', true, false).map((rule) => rule.propertyName));
    declared.set(type, fields);
  }
  return fields;
}

/**
 * class-validator's whitelist looks a key up in a plain object, so `constructor`, `toString` or
 * `__proto__` pass as known. Here every key a body or query carries must be a field its DTO
 * declares; unknown ones are named together with the other fields' problems.
 */
class StrictValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const type = metadata.metatype;
    if ((metadata.type !== 'body' && metadata.type !== 'query') || !type || typeof value !== 'object' || value === null || Array.isArray(value)) {
      return super.transform(value, metadata);
    }
    const fields = declaredFieldsOf(type);
    if (fields.size === 0) return super.transform(value, metadata);
    const unknown = Object.keys(value).filter((key) => !fields.has(key));
    if (unknown.length === 0) return super.transform(value, metadata);
    const problems: FieldProblem[] = unknown.map((key) => ({ field: key, message: `${key} is not an accepted field` }));
    const known = Object.fromEntries(Object.entries(value).filter(([key]) => fields.has(key)));
    try {
      await super.transform(known, metadata);
    } catch (error) {
      if (!(error instanceof RequestValidationFailed)) throw error;
      problems.push(...(error.fields ?? []));
    }
    throw new RequestValidationFailed(problems);
  }
}

/** The one validation pipe: unknown fields are refused, every bad field is named. */
export function createValidationPipe(): ValidationPipe {
  return new StrictValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    stopAtFirstError: false,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => new RequestValidationFailed(collect(errors)),
  });
}
