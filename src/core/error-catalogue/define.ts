/**
 * How the error catalogue names an error: its status and machine code fixed once, its message
 * fixed or built from the few values it names. Routes throw `catalogue.entry(...)`, never a
 * hand-made AppError, so a status, code or wording lives in exactly one place.
 *
 * Every entry is also recorded in `catalogueEntries` so a test can check the catalogue as a whole.
 */
import { AppError } from '../errors.js';

export interface CatalogueEntry {
  readonly status: number;
  readonly code: string;
}

const entries: CatalogueEntry[] = [];

/** Every entry defined so far (the catalogue's modules define theirs when imported). */
export const catalogueEntries: readonly CatalogueEntry[] = entries;

type Headers = Readonly<Record<string, string>>;

/** An error whose message never changes. */
export function fixed(status: number, code: string, message: string, headers: Headers = {}): () => AppError {
  entries.push({ status, code });
  return () => new AppError(status, code, message, headers);
}

/** An error whose message (and optionally headers) name the values the caller passes. */
export function worded<A extends unknown[]>(
  status: number,
  code: string,
  message: (...args: A) => string,
  headers: (...args: A) => Headers = () => ({}),
): (...args: A) => AppError {
  entries.push({ status, code });
  return (...args: A) => new AppError(status, code, message(...args), headers(...args));
}
