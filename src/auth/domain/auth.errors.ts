import { DomainError } from '../../common/domain/domain-error';

/** The provider's own 401 wording, reused so partners see one vocabulary. */
export const INVALID_TOKEN_DETAILS = 'The token is invalid or expired';

export class InvalidClientToken extends DomainError {
  constructor() {
    super('AUTH.INVALID_TOKEN', { details: INVALID_TOKEN_DETAILS });
  }
}

export class RoleNotAllowed extends DomainError {
  constructor(required: readonly string[]) {
    super('AUTH.FORBIDDEN', {
      details: `Requires the ${required.join(' or ')} role`,
    });
  }
}

export class ApiClientNameTaken extends DomainError {
  constructor(name: string) {
    super('AUTH.CLIENT_NAME_TAKEN', `An active client named '${name}' already exists`);
  }
}

export class InvalidApiClient extends DomainError {
  constructor(message: string) {
    super('AUTH.INVALID_CLIENT', message);
  }
}
