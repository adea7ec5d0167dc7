// Makes `npm start` / `npm test` work on a fresh clone: installs dependencies when missing and
// builds when dist/ is older than the sources. One progress line per step it takes; silent when
// there is nothing to do. A step's own output is shown only when it fails.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.dirname(path.dirname(new URL(import.meta.url).pathname));

function step(label, command, args) {
  const started = Date.now();
  process.stderr.write(`stowage: ${label}… `);
  const result = spawnSync(command, args, { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (result.status !== 0) {
    process.stderr.write(`failed after ${seconds} s:\n${result.stdout ?? ''}${result.stderr ?? ''}\n`);
    process.exit(result.status ?? 1);
  }
  process.stderr.write(`done (${seconds} s)\n`);
}

if (!fs.existsSync(path.join(root, 'node_modules', '.package-lock.json'))) {
  // `npm ci` installs exactly the lock file (complete for linux-x64, optional packages included).
  step('installing dependencies with npm ci (first run, a few minutes)', 'npm', [
    'ci', '--no-audit', '--no-fund', '--loglevel=error',
  ]);
}

function newest(dir) {
  let t = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    t = Math.max(t, entry.isDirectory() ? newest(p) : fs.statSync(p).mtimeMs);
  }
  return t;
}

const stamp = path.join(root, 'dist', '.build-stamp');
const built = fs.existsSync(stamp) ? fs.statSync(stamp).mtimeMs : 0;
if (newest(path.join(root, 'src')) > built || fs.statSync(path.join(root, 'tsconfig.json')).mtimeMs > built) {
  step('building (tsc)', process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json']);
  fs.writeFileSync(stamp, new Date().toISOString());
}
