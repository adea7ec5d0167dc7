/** Reading the store's errors without knowing which store it is. */

/**
 * A write broke a unique key or primary key (PostgreSQL 23505; better-sqlite3's constraint codes,
 * or its message when the code is missing). Callers retry with a fresh value or answer "duplicate".
 */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | null;
  if (!e) return false;
  return e.code === '23505' || e.code === 'SQLITE_CONSTRAINT_UNIQUE' || e.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || /UNIQUE constraint failed/.test(e.message ?? '');
}
