/**
 * Operations that do not touch the bytes: `-/inline/yes|no/` and library tags `-/@clib/…/` (which
 * the upload widget appends and which are ignored). Anything else is an image operation.
 */
import { CdnUrlError } from '../http/cdn/url.js';

export interface DeliveryOps {
  inline: boolean | null;
  /** Remaining operation segments, each op starting with '-'. */
  rest: string[];
}

export function splitDeliveryOps(segments: string[]): DeliveryOps {
  let inline: boolean | null = null;
  const rest: string[] = [];
  for (const op of groupOps(segments)) {
    const [name = '', ...params] = op;
    if (name.startsWith('@')) continue;
    if (name === 'inline') {
      if (params.length !== 1 || (params[0] !== 'yes' && params[0] !== 'no')) throw new CdnUrlError(400, 'inline: expected yes or no.');
      inline = params[0] === 'yes';
      continue;
    }
    rest.push('-', ...op);
  }
  return { inline, rest };
}

/** ['-','a','1','-','b'] -> [['a','1'],['b']]; segments must start with '-'. */
export function groupOps(segments: string[]): string[][] {
  const out: string[][] = [];
  for (const s of segments) {
    if (s === '-') out.push([]);
    else if (out.length === 0) throw new CdnUrlError(400, `Unexpected path segment "${s}": operations must follow "-/".`);
    else (out[out.length - 1] as string[]).push(s);
  }
  if (out.some((op) => op.length === 0)) throw new CdnUrlError(400, 'Empty operation after "-/".');
  return out;
}
