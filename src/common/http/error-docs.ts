/** Where the gateway serves its reference pages for partners (the error catalogue among them). */
export const REFERENCE_PATH = '/reference';
/** The error catalogue, docs/errors.md as HTML: each code's entry is an anchor on it. */
export const ERROR_DOCS_PATH = `${REFERENCE_PATH}/errors`;

/** The anchor of an error code's entry in the catalogue (`REQUEST.VALIDATION_FAILED` → `request-validation-failed`). */
export function errorDocAnchor(code: string): string {
  return code.toLowerCase().replace(/[._]/g, '-');
}

/**
 * Where an error code's entry is read (`error.doc_url`, the request log's `doc_url`): under
 * ERROR_DOCS_URL when the operator publishes the catalogue elsewhere; otherwise on the gateway's
 * own page, at PUBLIC_BASE_URL or, without it, the origin the request was sent to. Always absolute.
 */
export class ErrorDocs {
  constructor(private readonly settings: { readonly ERROR_DOCS_URL?: string; readonly PUBLIC_BASE_URL?: string }) {}

  /** The entry of `code`, for a request sent to `origin` (undefined when neither a setting nor the request names an origin). */
  urlOf(code: string, origin: string | undefined): string | undefined {
    const page = this.settings.ERROR_DOCS_URL ?? this.pageOn(this.settings.PUBLIC_BASE_URL ?? origin);
    return page === undefined ? undefined : `${page}#${errorDocAnchor(code)}`;
  }

  private pageOn(origin: string | undefined): string | undefined {
    return origin === undefined ? undefined : `${origin.replace(/\/$/, '')}${ERROR_DOCS_PATH}`;
  }
}
