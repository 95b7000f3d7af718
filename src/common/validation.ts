import { ValidationError, ValidationPipe } from '@nestjs/common';
import { DomainError, FieldProblem } from './domain-error';

export class RequestValidationFailed extends DomainError {
  constructor(fields: FieldProblem[]) {
    const summary = fields.map((f) => f.message).join('; ');
    super('REQUEST.VALIDATION_FAILED', 'invalid_input', 'The request has invalid fields', {
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

/** The one validation pipe: unknown fields are refused, every bad field is named. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    stopAtFirstError: false,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => new RequestValidationFailed(collect(errors)),
  });
}
