import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { applyRequestTimeouts } from '../../src/http/common/timeouts.js';

describe('request fronts', () => {
  it('keep one request listener on the server, calling the ones they wrapped', async () => {
    const seen: string[] = [];
    const server = http.createServer((_req, res) => {
      seen.push('inner');
      res.end('ok');
    });
    server.on('request', () => seen.push('second'));
    applyRequestTimeouts(server, { headersMs: 10_000, requestMs: 0, bodyIdleMs: 5_000 });
    expect(server.listenerCount('request')).toBe(1);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as { port: number };
      const res = await fetch(`http://127.0.0.1:${port}/`);
      expect(await res.text()).toBe('ok');
      expect(seen).toEqual(['inner', 'second']);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
