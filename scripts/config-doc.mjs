// `npm run docs:config`: writes docs/configuration.md and the README's settings table from the
// configuration (src/config/, through the build; see src/config/reference.ts). test/config-doc.test.ts
// fails when either differs from what this writes.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const { buildCli } = await import('../dist/main.js');
const ref = await import('../dist/config/reference.js');

const rows = ref.settingRows(ref.descriptionsFrom(fs.readFileSync(path.join(root, 'src/config/schema.ts'), 'utf8')));
const { flags, commands } = ref.cliFacts(buildCli());
fs.writeFileSync(path.join(root, 'docs/configuration.md'), ref.renderConfigurationPage(rows, flags, commands));
const readmePath = path.join(root, 'README.md');
fs.writeFileSync(readmePath, ref.withReadmeTable(fs.readFileSync(readmePath, 'utf8'), ref.renderReadmeTable(rows, flags)));
const count = (g) => rows.filter((r) => r.group === g).reduce((n, r) => n + r.keys.length, 0);
process.stdout.write(`docs/configuration.md and README.md written: ${count('operator')} operator, ${count('tuning')} tuning, ${count('test')} test-only settings\n`);
