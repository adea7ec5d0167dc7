/**
 * docs/configuration.md and the README's settings table are generated from src/config/ (and the
 * `serve` flags of src/main.ts) by `npm run docs:config`: this fails the moment either differs from
 * what the configuration says now, and names the command that regenerates them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENV_NAMES, SETTING_GROUPS } from '../src/config/env.js';
import { schema } from '../src/config/schema.js';
import { buildCli } from '../src/main.js';
import { README_BEGIN, README_END, REGENERATE, cliFacts, descriptionsFrom, renderConfigurationPage, renderReadmeTable, settingRows } from '../src/config/reference.js';

const ROOT = path.resolve(__dirname, '..');
const read = (rel: string): string => fs.readFileSync(path.join(ROOT, rel), 'utf8');
const STALE = `is out of date with src/config/: run \`${REGENERATE}\` and commit what it writes`;

function generated(): { page: string; table: string } {
  const rows = settingRows(descriptionsFrom(read('src/config/schema.ts')));
  const { flags, commands } = cliFacts(buildCli());
  return { page: renderConfigurationPage(rows, flags, commands), table: renderReadmeTable(rows, flags) };
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(full) : e.name.endsWith('.ts') ? [full] : [];
  });
}

describe('the settings reference', () => {
  const { page, table } = generated();

  it('docs/configuration.md is what the configuration generates', () => {
    expect(read('docs/configuration.md'), `docs/configuration.md ${STALE}`).toBe(page);
  });

  it("the README's settings table is the operator settings, generated", () => {
    const readme = read('README.md');
    const begin = readme.indexOf(README_BEGIN);
    const end = readme.indexOf(README_END);
    expect(begin, `README.md lost its settings table markers: ${STALE}`).toBeGreaterThan(0);
    expect(readme.slice(begin, end + README_END.length), `README.md's settings table ${STALE}`).toBe(table);
  });

  it('documents every STOWAGE_ name the code mentions, and every setting once', () => {
    const named = new Set(sourceFiles(path.join(ROOT, 'src')).flatMap((f) => fs.readFileSync(f, 'utf8').match(/\bSTOWAGE_[A-Z0-9_]*[A-Z0-9]\b/g) ?? []));
    expect(named.size).toBeGreaterThan(80);
    expect([...named].filter((name) => !page.includes(`\`${name}\``))).toEqual([]);
    for (const key of Object.keys(schema.shape) as Array<keyof typeof ENV_NAMES>) {
      expect(page.split(`\`${ENV_NAMES[key]}\``).length - 1, ENV_NAMES[key]).toBe(1);
    }
  });

  it('reads no STOWAGE_ variable past the schema', () => {
    const direct = sourceFiles(path.join(ROOT, 'src')).filter((f) => /process\.env(\[\s*['"`]|\.)STOWAGE_/.test(fs.readFileSync(f, 'utf8')));
    expect(direct.map((f) => path.relative(ROOT, f))).toEqual([]);
  });

  it('keeps the operator settings few', () => {
    const operator = Object.values(SETTING_GROUPS).filter((g) => g === 'operator').length;
    expect(operator).toBeGreaterThan(10);
    expect(operator).toBeLessThanOrEqual(35);
  });
});

describe('descriptions read from the schema source', () => {
  const source = [
    "export const schema = z.object({",
    '  /** The first. */',
    '  first: z.string(),',
    '  /**',
    '   * Two lines',
    '   * of text.',
    '   */',
    '  second: z.string(),',
    '  third: z.string(),',
    '});',
    'const later = { ignored: 1 };',
  ].join('\n');

  it('takes one-line and multi-line comments, and a setting without one shares the one above', () => {
    expect([...descriptionsFrom(source)]).toEqual([
      ['first', 'The first.'],
      ['second', 'Two lines of text.'],
      ['third', 'Two lines of text.'],
    ]);
  });

  it('refuses a setting with no description, naming the file to edit and the command', () => {
    const withoutFirst = new Map(descriptionsFrom(read('src/config/schema.ts')));
    withoutFirst.delete('dataDir');
    expect(() => settingRows(withoutFirst)).toThrow(/dataDir has no description: .*src\/config\/schema\.ts.*npm run docs:config/);
  });
});
