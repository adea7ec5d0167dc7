import { fileURLToPath } from 'node:url';

/**
 * The path of the compiled module `name` next to the module at `base` (its import.meta.url), for
 * starting it as a process of its own. Under vitest the sources run as TypeScript from src/, which
 * a plain `node` child cannot load: the compiled copy in dist/ is used instead.
 */
export function compiledSibling(base: string, name: string): string {
  const path = fileURLToPath(new URL(name, base));
  if (!base.endsWith('.ts')) return path;
  const at = path.lastIndexOf('/src/');
  return at === -1 ? path : `${path.slice(0, at)}/dist/${path.slice(at + '/src/'.length)}`;
}
