/** The S3 surface's query parameters read as URLSearchParams reads them, malformed input included. */
import { describe, expect, it } from 'vitest';
import { S3Query } from '../../src/s3/query.js';

const QUERIES = [
  '',
  'uploads',
  'list-type=2&prefix=a%2Fb&delimiter=%2F',
  'X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=KEY%2F20261129%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-SignedHeaders=host',
  'prefix=a+b&prefix=second',
  'a=%zz&b=%E2%82%AC&c=%C3&d=%',
  'response-content-disposition=attachment%3B%20filename%3D%22x.txt%22',
  '&&x&=y&z=1=2',
  'caf%C3%A9=%F0%9F%98%80',
  'X-Amz-Date=20261129T000000Z&response%2Dcontent-type=text%2Fplain',
];

describe('S3 query parameters', () => {
  it('answers get, has, keys and names by prefix as URLSearchParams does', () => {
    for (const raw of QUERIES) {
      const ours = new S3Query(raw);
      const theirs = new URLSearchParams(raw);
      const names = [...new Set(theirs.keys())];
      expect([...ours.keys()], raw).toEqual(names);
      expect(ours.hasNameStarting('response-'), raw).toBe(names.some((n) => n.startsWith('response-')));
      expect(ours.hasNameStarting('response-'), raw).toBe(names.some((n) => n.startsWith('response-')));
      for (const name of [...names, 'absent']) {
        expect(ours.get(name), `${raw} ${name}`).toBe(theirs.get(name));
        expect(ours.has(name), `${raw} ${name}`).toBe(theirs.has(name));
      }
    }
  });
});
