// Makes `npm start` / `npm test` work on a fresh clone: installs dependencies when missing and
// builds when dist/ is older than the sources. Quiet when there is nothing to do.
import { execSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.dirname(path.dirname(new URL(import.meta.url).pathname));
const run = (cmd) => execSync(cmd, { cwd: root, stdio: 'inherit' });

if (!fs.existsSync(path.join(root, 'node_modules', '.package-lock.json'))) {
  console.error('stowage: installing dependencies (first run)…');
  try {
    run('npm ci --no-audit --no-fund');
  } catch {
    // Some npm versions refuse `ci` over optional platform packages; install the locked versions.
    run('npm install --no-audit --no-fund');
  }
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
  console.error('stowage: building…');
  run('npx tsc -p tsconfig.json');
  fs.writeFileSync(stamp, new Date().toISOString());
}
