import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isAccessToken } from '../../lambdas/platform/bearer.ts';
import {
  bearerChallenge,
  protectedResourceMetadata,
  resourceMetadataPath,
} from '../../lambdas/protocol/oauth/challenge.ts';

describe('resource metadata', () => {
  it('puts the well-known segment between the host and the resource path (RFC 9728 3.1)', () => {
    expect(resourceMetadataPath('https://erp.example.com/mcp')).toBe(
      '/.well-known/oauth-protected-resource/mcp',
    );
    expect(resourceMetadataPath('https://erp.example.com/prod/mcp/')).toBe(
      '/.well-known/oauth-protected-resource/prod/mcp',
    );
    expect(resourceMetadataPath('https://erp.example.com')).toBe('/.well-known/oauth-protected-resource');
  });

  it('names the resource, its issuers, scopes and the header as the only bearer method', () => {
    expect(
      protectedResourceMetadata({ resource: 'https://e.example/mcp', issuers: ['https://id.example'] }),
    ).toEqual({
      resource: 'https://e.example/mcp',
      authorization_servers: ['https://id.example'],
      scopes_supported: ['erp.read', 'erp.write'],
      bearer_methods_supported: ['header'],
      resource_name: 'erp-proxy MCP',
    });
  });
});

describe('bearerChallenge', () => {
  const url = 'https://erp.example.com/.well-known/oauth-protected-resource/mcp';
  it('names the metadata, and the error, its description and scopes when given', () => {
    expect(bearerChallenge({ resourceMetadataUrl: url })).toBe(`Bearer resource_metadata="${url}"`);
    expect(
      bearerChallenge({
        resourceMetadataUrl: url,
        error: 'insufficient_scope',
        description: 'writing needs "erp.write"',
        scope: ['erp.read', 'erp.write'],
      }),
    ).toBe(
      `Bearer resource_metadata="${url}", error="insufficient_scope", error_description="writing needs \\"erp.write\\"", scope="erp.read erp.write"`,
    );
  });

  it('never lets a description break the header (property: no control characters, quotes escaped)', () => {
    fc.assert(
      fc.property(fc.string(), (description) => {
        const value = bearerChallenge({ resourceMetadataUrl: url, error: 'invalid_token', description });
        expect(value).not.toMatch(/[\r\n\0]/);
        expect(value).toMatch(/error_description="(?:[^"\\]|\\.)*"$/);
      }),
    );
  });
});

describe('isAccessToken', () => {
  it('tells a JWT from a proxy key', () => {
    const header = Buffer.from('{"alg":"ES256","kid":"a"}').toString('base64url');
    expect(isAccessToken(`${header}.eyJzdWIiOiJ4In0.c2ln`)).toBe(true);
    expect(isAccessToken(`${header}.eyJzdWIiOiJ4In0.`)).toBe(true);
    for (const key of [
      '3f1c9a2b7d4e6f8091a2b3c4d5e6f708192a3b4c',
      'my-local-proxy-key-123',
      'a.b.c',
      'x.y',
      '',
    ])
      expect(isAccessToken(key)).toBe(false);
  });
});
