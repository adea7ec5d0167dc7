/**
 * Errors carry their HTTP meaning from birth: a machine code, a status and a public message.
 * Each surface (REST, Upload, CDN) renders them in its own wire format in one place.
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

export const badRequest = (code: string, message: string): AppError => new AppError(400, code, message);
export const notFound = (code: string, message: string): AppError => new AppError(404, code, message);
export const forbidden = (code: string, message: string): AppError => new AppError(403, code, message);

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}
