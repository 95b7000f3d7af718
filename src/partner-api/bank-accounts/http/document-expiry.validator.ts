import { applyDecorators, Injectable } from '@nestjs/common';
import { registerDecorator, ValidationArguments, ValidationOptions, ValidatorConstraint, ValidatorConstraintInterface } from 'class-validator';
import { parseCalendarDate } from '../../../common/domain/calendar-date';
import { Clock } from '../../../common/domain/clock.port';
import { dateRules } from '../../../common/http/date.validators';
import { expiryRuleMessage, isExpiryAccepted } from '../domain/document-expiry.rule';

/** The provider's expiry rule (bank-accounts/domain) on a DTO field, today from the injected Clock. */
@ValidatorConstraint({ name: 'isAcceptedDocumentExpiry' })
@Injectable()
export class DocumentExpiryConstraint implements ValidatorConstraintInterface {
  constructor(private readonly clock: Clock) {}

  validate(value: unknown): boolean {
    return typeof value === 'string' && isExpiryAccepted(value, this.clock.now());
  }

  defaultMessage(args?: ValidationArguments): string {
    return parseCalendarDate(args?.value) === undefined ? 'expiration_date must be a real date in YYYY-MM-DD form' : expiryRuleMessage(this.clock.now());
  }
}

/** The rule, and in the OpenAPI document its earliest date: one calendar month from today (UTC). */
export function IsAcceptedDocumentExpiry(options?: ValidationOptions): PropertyDecorator {
  return applyDecorators(dateRules({ 'x-minimum-date': 'today+P1M' }), (target: object, propertyName: string | symbol) =>
    registerDecorator({ target: target.constructor, propertyName: propertyName as string, options, validator: DocumentExpiryConstraint }),
  );
}
