/**
 * Errors carry their HTTP meaning from birth: a machine code, a status and a public message.
 * Each surface (REST, Upload, CDN) renders them in its own wire format in one place. Routes do not
 * build them: they throw the named entries of `core/error-catalogue/`.
 */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Extra headers such as Retry-After. */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = 'AppError';
  }
}

/**
 * An error whose wire body is a JSON object of its own rather than the surface's `{"detail": …}`:
 * the management API's field errors, `{"field": ["message"]}` (REST renders `body`; the Upload
 * surface, which has no such answers, renders the message).
 */
export class BodyError extends AppError {
  constructor(
    status: number,
    code: string,
    readonly body: Readonly<Record<string, unknown>>,
  ) {
    super(status, code, Object.values(body).flat().map(String).join(' ') || 'Invalid request.');
    this.name = 'BodyError';
  }
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}
