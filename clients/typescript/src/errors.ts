// What can go wrong, as errors a caller can tell apart.

/** The service refused a call, or could not be reached. */
export class ReviewLoopError extends Error {
  /** The HTTP status; `undefined` when there was no answer. */
  readonly status?: number;
  /** The answer's body, when there was one. */
  readonly body?: unknown;

  constructor(message: string, status?: number, body?: unknown) {
    super(status === undefined ? message : `${status}: ${message}`);
    this.name = new.target.name;
    this.status = status;
    this.body = body;
  }
}

/** 400 or 422: the input is invalid; the message names every bad field. */
export class ValidationError extends ReviewLoopError {}
/** 401: the API key is missing, unknown or revoked. */
export class AuthenticationError extends ReviewLoopError {}
/** 403: the key may not do this. */
export class PermissionDeniedError extends ReviewLoopError {}
/** 404: it does not exist, or the key may not see it. */
export class NotFoundError extends ReviewLoopError {}
/** 409: the request's state does not allow it. */
export class ConflictError extends ReviewLoopError {}
/** 5xx: the service could not do it now. */
export class ServerError extends ReviewLoopError {}
/** The service did not answer. */
export class ConnectionError extends ReviewLoopError {}

/** 429: over the key's allowance; `retryAfter` says in how many seconds to retry. */
export class RateLimitError extends ReviewLoopError {
  readonly retryAfter?: number;

  constructor(message: string, status: number, body: unknown, retryAfter?: number) {
    super(message, status, body);
    this.retryAfter = retryAfter;
  }
}

/** `wait` gave up before the request ended. */
export class WaitTimeout extends ReviewLoopError {
  constructor(message: string, readonly request: unknown) {
    super(message);
  }
}

/** A reviewer did not approve (or the request timed out on a false default). */
export class Rejected extends ReviewLoopError {
  /** The reviewer's note, if any. */
  readonly comment: string | null;

  constructor(
    message: string,
    readonly request: { response_comment?: string | null },
    /** `rejected`, `timeout` or `cancelled`. */
    readonly reason: string,
  ) {
    super(message);
    this.comment = request.response_comment ?? null;
  }
}

/** The body was not signed with this secret, or too long ago. */
export class WebhookVerificationError extends ReviewLoopError {}

/** The error of an answer with this status. */
export function errorFor(status: number, message: string, body: unknown, retryAfter?: number): ReviewLoopError {
  if (status === 429) return new RateLimitError(message, status, body, retryAfter);
  const kinds: Record<number, typeof ReviewLoopError> = {
    400: ValidationError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    422: ValidationError,
  };
  const Kind = kinds[status] ?? (status >= 500 ? ServerError : ReviewLoopError);
  return new Kind(message, status, body);
}
