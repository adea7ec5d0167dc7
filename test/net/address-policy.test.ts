import { describe, expect, it } from 'vitest';
import { AddressPolicy, parseAllowList } from '../../src/net/address-policy.js';

const refused = [
  ['loopback v4', '127.0.0.1'],
  ['loopback v4 other', '127.255.0.9'],
  ['loopback v6', '::1'],
  ['rfc1918 10/8', '10.1.2.3'],
  ['rfc1918 172.16/12 low', '172.16.0.1'],
  ['rfc1918 172.16/12 high', '172.31.255.254'],
  ['rfc1918 192.168/16', '192.168.1.1'],
  ['cgnat 100.64/10', '100.64.0.1'],
  ['alibaba metadata', '100.100.100.200'],
  ['link-local / aws metadata', '169.254.169.254'],
  ['unspecified v4', '0.0.0.0'],
  ['unspecified v6', '::'],
  ['broadcast', '255.255.255.255'],
  ['reserved 240/4', '240.0.0.1'],
  ['multicast v4', '224.0.0.1'],
  ['multicast v6', 'ff02::1'],
  ['test-net', '192.0.2.10'],
  ['benchmarking', '198.18.0.1'],
  ['unique-local fc00::/7', 'fc00::1'],
  ['unique-local fd..', 'fd12:3456::1'],
  ['aws v6 metadata', 'fd00:ec2::254'],
  ['link-local v6', 'fe80::1'],
  ['link-local v6 with zone', 'fe80::1%eth0'],
  ['site-local v6', 'fec0::1'],
  ['v4-mapped loopback', '::ffff:127.0.0.1'],
  ['v4-mapped private', '::ffff:10.0.0.1'],
  ['v4-mapped metadata', '::ffff:169.254.169.254'],
  ['v4-compatible loopback', '::127.0.0.1'],
  ['nat64 private', '64:ff9b::10.0.0.1'],
  ['6to4 loopback', '2002:7f00:1::'],
  ['teredo', '2001::1'],
  ['documentation v6', '2001:db8::1'],
  ['not an address', 'example.com'],
] as const;

const allowed = ['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700::1111', '::ffff:8.8.8.8', '64:ff9b::8.8.8.8', '2002:808:808::1'];

describe('AddressPolicy (default)', () => {
  const policy = new AddressPolicy();
  it.each(refused)('refuses %s (%s)', (_name, addr) => expect(policy.allows(addr)).toBe(false));
  it.each(allowed)('allows public %s', (addr) => expect(policy.allows(addr)).toBe(true));
});

describe('AddressPolicy allowlist', () => {
  it('lets allowlisted networks through, including their v4-mapped form', () => {
    const policy = new AddressPolicy(parseAllowList('127.0.0.0/8, ::1/128'));
    for (const a of ['127.0.0.1', '127.0.0.2', '::ffff:127.0.0.1', '::1']) expect(policy.allows(a)).toBe(true);
    expect(policy.allows('10.0.0.1')).toBe(false);
  });
  it('a bare address means one host', () => {
    const policy = new AddressPolicy(parseAllowList('10.0.0.5'));
    expect(policy.allows('10.0.0.5')).toBe(true);
    expect(policy.allows('10.0.0.6')).toBe(false);
  });
});

describe('parseAllowList', () => {
  it('parses comma-separated CIDRs, skipping blanks', () => {
    expect(parseAllowList(' 127.0.0.0/8 ,, fc00::/7 ,')).toHaveLength(2);
    expect(parseAllowList('')).toEqual([]);
    expect(parseAllowList(['10.0.0.0/8'])).toHaveLength(1);
  });
  it.each(['10.0.0.0/33', 'nope', '1.2.3.4/x', '::1/129', '300.0.0.0/8'])('throws naming the bad entry %s', (bad) => {
    expect(() => parseAllowList(`127.0.0.0/8,${bad}`)).toThrow(bad);
  });
});
