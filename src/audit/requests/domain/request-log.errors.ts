import { DomainError } from '../../../common/domain/domain-error';

/** No request of the caller's tenant has this id: another tenant's is answered the same. */
export class RequestNotFound extends DomainError {
  constructor() {
    super('REQUEST_LOG.NOT_FOUND');
  }
}
