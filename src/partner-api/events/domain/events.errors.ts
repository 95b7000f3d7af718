import { DomainError } from '../../../common/domain/domain-error';

/** Another tenant's event looks like none. */
export class EventNotFound extends DomainError {
  constructor() {
    super('EVENT.NOT_FOUND');
  }
}
