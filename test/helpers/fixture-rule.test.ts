/**
 * The suite fixture rule (CONTRIBUTING, "Tests"): a suite gets its server from useServer()
 * (test/helpers/use-server.ts). A suite that starts a server in its own beforeAll must say why
 * useServer() does not fit, in a comment holding the words `useServer() does not fit` (several
 * nodes on one store, restarts on the same data dir, SIGKILL, a data dir that must outlive the
 * server...). Servers started inside a test, or per test, are not hooks and are not checked.
 * test/reliability/ is left out: it runs under its own config (`npm run test:reliability`), its
 * hooks decide per mode whether a server starts at all, and its suites are not converted yet.
 * The check reads the test sources; the first test proves it catches an offender.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const TEST = path.resolve(__dirname, '..');
const EXCUSE = /useServer\(\) does not fit/;

/** Source text without comments (strings stay: a hook body is cut at its own closing parenthesis). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

/** The text of each `beforeAll(...)` call: from its opening parenthesis to the matching closing one. */
function beforeAllBodies(text: string): string[] {
  const body = code(text);
  const out: string[] = [];
  for (const m of body.matchAll(/\bbeforeAll\s*\(/g)) {
    let depth = 0;
    let quote: string | null = null;
    for (let i = (m.index ?? 0) + m[0].length - 1; i < body.length; i++) {
      const c = body[i] as string;
      if (quote) {
        if (c === '\\') i++;
        else if (c === quote) quote = null;
        continue;
      }
      if (c === "'" || c === '"' || c === '`') quote = c;
      else if (c === '(') depth++;
      else if (c === ')' && --depth === 0) {
        out.push(body.slice(m.index, i + 1));
        break;
      }
    }
  }
  return out;
}

function fixtureProblems(rel: string, text: string): string[] {
  if (EXCUSE.test(text)) return [];
  if (!beforeAllBodies(text).some((hook) => /\bstartServer\s*\(/.test(hook))) return [];
  return [`${rel} starts its server in beforeAll: use useServer() (test/helpers/use-server.ts), or say in a comment why "useServer() does not fit"`];
}

function suites(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name === 'reliability' ? [] : suites(full);
    return e.name.endsWith('.test.ts') ? [full] : [];
  });
}

describe('the fixture check', () => {
  it('flags a server started in beforeAll without a reason, and nothing else', () => {
    const own = "let server;\nbeforeAll(async () => {\n  server = await startServer({ env: { A: '1' } });\n});";
    expect(fixtureProblems('x.test.ts', own)).toHaveLength(1);
    expect(fixtureProblems('x.test.ts', "beforeAll(() => startServer().then((s) => (server = s)), 60_000);")).toHaveLength(1);
    expect(fixtureProblems('x.test.ts', `// useServer() does not fit: two nodes share one data dir.\n${own}`)).toEqual([]);
    expect(fixtureProblems('x.test.ts', "const srv = useServer({ env: { A: '1' } });\nbeforeAll(async () => { await srv.call('GET', '/x/'); });")).toEqual([]);
    expect(fixtureProblems('x.test.ts', "it('restarts', async () => { const s = await startServer(); await s.stop(); });")).toEqual([]);
    expect(fixtureProblems('x.test.ts', "beforeAll(async () => { await fetch(')'); });\nit('x', async () => startServer());")).toEqual([]);
  });
});

describe('test suites', () => {
  it('get their server from useServer(), or say why not', () => {
    const files = suites(TEST).map((full) => ({ rel: path.relative(TEST, full).split(path.sep).join('/'), text: fs.readFileSync(full, 'utf8') }));
    expect(files.filter((f) => f.text.includes('useServer(')).length).toBeGreaterThan(10);
    expect(files.flatMap((f) => fixtureProblems(f.rel, f.text))).toEqual([]);
  });
});
