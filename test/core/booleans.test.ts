/** The boolean spellings each interface accepts, read by the one parser. */
import { describe, expect, it } from 'vitest';
import { OPERATOR_BOOLEANS, parseBoolean, REST_API_BOOLEANS, UPLOAD_API_BOOLEANS } from '../../src/core/booleans.js';

describe('parseBoolean', () => {
  it('Upload API: 1/true/True and 0/false/False, exactly as the SDKs send them', () => {
    for (const v of ['1', 'true', 'True']) expect(parseBoolean(v, UPLOAD_API_BOOLEANS)).toBe(true);
    for (const v of ['0', 'false', 'False']) expect(parseBoolean(v, UPLOAD_API_BOOLEANS)).toBe(false);
    for (const v of ['TRUE', 'yes', 'on', ' 1', '', 'auto', true, 1, undefined]) expect(parseBoolean(v, UPLOAD_API_BOOLEANS)).toBeUndefined();
  });

  it('REST API: true/1 and false/0 in any case, and JSON booleans and 0/1 numbers in bodies', () => {
    for (const v of ['1', 'true', 'True', 'TRUE', true, 1]) expect(parseBoolean(v, REST_API_BOOLEANS)).toBe(true);
    for (const v of ['0', 'false', 'False', 'FALSE', false, 0]) expect(parseBoolean(v, REST_API_BOOLEANS)).toBe(false);
    for (const v of ['yes', 'no', '', 2, null, undefined, {}]) expect(parseBoolean(v, REST_API_BOOLEANS)).toBeUndefined();
  });

  it('operator (config, CLI): the usual on/off words in any case', () => {
    for (const v of ['on', 'ON', 'yes', 'true', '1', true]) expect(parseBoolean(v, OPERATOR_BOOLEANS)).toBe(true);
    for (const v of ['off', 'No', 'false', '0', false]) expect(parseBoolean(v, OPERATOR_BOOLEANS)).toBe(false);
    expect(parseBoolean('maybe', OPERATOR_BOOLEANS)).toBeUndefined();
  });
});
